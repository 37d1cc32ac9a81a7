/**
 * The owner's mark at Check (provider/framework/autoname.ts): an Instance the program leaves untitled
 * is named after its resource with a random suffix, once, and keeps that name through every later
 * Check; a declared title, an explicitly empty one and a preview's unknown pass as given. Through both
 * front doors, and, for the native plugin, the engine's random seed and autonaming configuration.
 */
import type { Harness } from "../harness";
import { RESOURCE_NAME_KEY } from "../../provider/framework/check";
import { PluginProcess, UNKNOWN as PLUGIN_UNKNOWN } from "../native/plugin";
import { DOORS, gpucloudHarness } from "../support/providers";

const pod = { podUuid: "pod-1", gpuUuid: "gpu-1", gpuNums: 1 };
const AUTONAME = /^test-[0-9a-f]{7}$/;

describe.each(DOORS)("autonaming an Instance, through the %s door", (door) => {
  let h: Harness;
  beforeAll(async () => (h = await gpucloudHarness({ door, env: { PATH: process.env.PATH } })));
  afterAll(() => h.stop());

  it("names an untitled instance after its resource with 7 random hex, a new name for a new resource", async () => {
    const first = await h.checked("Instance", pod);
    const second = await h.checked("Instance", pod);
    expect(first.title).toMatch(AUTONAME);
    expect(second.title).toMatch(AUTONAME);
    expect(second.title).not.toBe(first.title);
  });

  it("keeps the name the state holds, through updates and a replacement alike", async () => {
    const created = await h.checked("Instance", pod);
    expect((await h.checked("Instance", { ...pod, running: false }, created)).title).toBe(created.title);
    expect((await h.checked("Instance", { ...pod, gpuNums: 2 }, created)).title).toBe(created.title);
  });

  it("passes a declared title, an explicitly empty one and a preview's unknown as given", async () => {
    expect((await h.checked("Instance", { ...pod, title: "trainer" })).title).toBe("trainer");
    expect((await h.checked("Instance", { ...pod, title: "" })).title).toBe("");
    expect((await h.checked("Instance", { ...pod, title: PLUGIN_UNKNOWN })).title).toBe(PLUGIN_UNKNOWN);
  });

  it("names an instance anew when the program drops a title the state held empty", async () => {
    const empty = await h.checked("Instance", { ...pod, title: "" });
    expect((await h.checked("Instance", pod, empty)).title).toMatch(AUTONAME);
  });
});

describe("autonaming from the resource's name", () => {
  let h: Harness;
  beforeAll(async () => (h = await gpucloudHarness({ env: { PATH: process.env.PATH } })));
  afterAll(() => h.stop());

  it("cuts a long resource name so that the name fits the cloud's 50 characters", async () => {
    const name = `${"é".repeat(60)}`;
    const { title } = await h.checked("Instance", { ...pod, [RESOURCE_NAME_KEY]: name });
    expect([...(title as string)]).toHaveLength(50);
    expect(title).toMatch(new RegExp(`^${"é".repeat(42)}-[0-9a-f]{7}$`));
  });

  it("cuts a long name between graphemes, never inside an emoji sequence or a letter and its accent", async () => {
    // A family emoji is 7 characters as the cloud counts them (4 people joined by 3 zero-width joiners).
    const family = "\u{1F469}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}";
    const accented = "e\u0301";
    const { title } = await h.checked("Instance", {
      ...pod,
      [RESOURCE_NAME_KEY]: `${accented}${family.repeat(8)}`,
    });
    // 42 characters are left before the suffix: the accented e (2) and 5 whole families (35), not a sixth cut short.
    expect(title).toMatch(new RegExp(`^${accented}(${family}){5}-[0-9a-f]{7}$`, "u"));
    expect([...(title as string)].length).toBeLessThanOrEqual(50);
  });
});

describe("autonaming as the engine configures it, through the native plugin", () => {
  let plugin: PluginProcess;
  beforeAll(async () => (plugin = await PluginProcess.start()));
  afterAll(() => plugin?.stop());
  const titleOf = async (...args: Parameters<PluginProcess["client"]["check"]>) =>
    (await plugin.client.check(...args)).inputs.title;

  it("tells the engine it takes Pulumi's autonaming configuration", async () => {
    const answer = await plugin.client.configure({ apiKey: "k-unused", baseUrl: "http://127.0.0.1:1" });
    expect(answer).toMatchObject({ supportsAutonamingConfiguration: true });
  });

  it("derives the suffix from the engine's random seed, so a preview and the update after it agree", async () => {
    const seed = Uint8Array.from({ length: 32 }, (_, i) => i);
    const first = await titleOf("Instance", pod, "trainer", { seed });
    expect(first).toMatch(/^trainer-[0-9a-f]{7}$/);
    expect(await titleOf("Instance", pod, "trainer", { seed })).toBe(first);
    expect(await titleOf("Instance", pod, "trainer", { seed: seed.map((b) => b + 1) })).not.toBe(first);
  });

  it("takes the proposed name, and refuses one the cloud cannot take when the engine enforces it", async () => {
    const proposed = "team-a-trainer-0001";
    expect(
      await titleOf("Instance", pod, "trainer", { autonaming: { mode: "propose", proposedName: proposed } }),
    ).toBe(proposed);
    const long = "x".repeat(51);
    expect(
      await titleOf("Instance", pod, "trainer", { autonaming: { mode: "propose", proposedName: long } }),
    ).toMatch(/^trainer-[0-9a-f]{7}$/);
    const enforced = await plugin.client.check("Instance", pod, "trainer", {
      autonaming: { mode: "enforce", proposedName: long },
    });
    expect(enforced.failures).toEqual([
      {
        property: "title",
        reason: `title must be at most 50 characters, but Pulumi's autonaming (pulumi:autonaming) proposes "${long}"`,
      },
    ]);
  });

  it("requires a title when the engine turns autonaming off, but keeps the one the state holds", async () => {
    const off = { mode: "disable", proposedName: "" } as const;
    const refused = await plugin.client.check("Instance", pod, "trainer", { autonaming: off });
    expect(refused.failures).toEqual([
      {
        property: "title",
        reason: "title is required: Pulumi's autonaming is turned off for this stack (pulumi:autonaming)",
      },
    ]);
    expect(
      await titleOf("Instance", pod, "trainer", { autonaming: off, olds: { ...pod, title: "kept" } }),
    ).toBe("kept");
  });
});
