/**
 * What a person running `pulumi up` sees and keeps when a create's answer is lost or its mark cannot be
 * written, through both front doors (the dynamic-provider server writes to stderr; the native plugin
 * writes to the engine's log, beside the resource):
 * - the progress of a lost answer: what it waits for, and until when;
 * - `gpucloud:sharedAccount false`: no wait for other deployers' titles;
 * - a mark the cloud will not write: after the mark window and one claim of its own, the instance goes to
 *   the engine (ErrorResourceInitFailed, never a wait until the deadline), and the next up writes it;
 * - a title a person cleared while another stack's create lost its answer: never taken by that stack, and
 *   the same mark written back by refresh and up;
 * - a cloud that carries creates out later than the timing model allows: the late instance is caught and
 *   destroyed, and the run says how slow the cloud was.
 * The provider's request timeout is 0.5 s (a loopback cloud: no floor), so the grace is 3 s of real time.
 */
import { fingerprint } from "pulumi-gpucloud/emulator";
import { GpuCloudClient } from "pulumi-gpucloud/sdk";
import type { EngineMessage } from "../../testing/engine-log";
import { RESOURCE_NAME_KEY } from "../../provider/framework/check";
import type { Harness, Props, ResourceState } from "../harness";
import { proxy } from "../support/dateless-proxy";
import { onCalls } from "../support/emulator-hooks";
import { initFailure } from "../support/init-failure";
import { DOORS, gpucloudHarness, providerConfig, type Door } from "../support/providers";
import { startWorld, titlesIn, type World } from "../support/world";

const USER = "team";
const KEY = "stack-a-key";
const OTHER_KEY = "stack-b-key";
const CONFIG = { "gpucloud:requestTimeoutMs": "500" };
const CREATE = "/instance/create_by_pod";
const TITLE = "/instance/update_title";
const LIST = "/instance/list";
/** The title a claim writes before its owner's mark (docs/failure-behaviour.md#ownership-in-a-shared-account). */
const CLAIM_PREFIX = "gpucloud-claim-";
const CLOCK = /\d\d:\d\d:\d\d/.source;

jest.setTimeout(120_000);

/** What the person running the command reads: the engine's log lines for the resource, or stderr's lines. */
function shown(h: Harness, door: Door, kind: "progress" | "warning"): string[] {
  if (door === "native") {
    const wanted = (m: EngineMessage) =>
      kind === "progress" ? m.severity === "info" && m.ephemeral : m.severity === "warning";
    return h.engineMessages.filter(wanted).map((m) => m.message);
  }
  const prefix = kind === "progress" ? "info: " : "warning: ";
  return h.stderr
    .split("\n")
    .filter((line) => line.startsWith(prefix))
    .map((line) => line.slice(prefix.length));
}

describe.each(DOORS)("lost creates and marks, through the %s door", (door: Door) => {
  let w: World;
  let other: GpuCloudClient;
  beforeAll(async () => {
    w = await startWorld({
      door,
      emulator: { apiKeys: [`${USER}:${KEY}`, `${USER}:${OTHER_KEY}`], balance: "1000000" },
      config: CONFIG,
      key: KEY,
    });
    other = new GpuCloudClient({ baseUrl: w.emu.url, apiKey: OTHER_KEY });
  });
  afterAll(async () => {
    await other?.close();
    await w?.stop();
  });
  const stacks: Harness[] = [];
  afterEach(async () => {
    w.emulator.faults.clear();
    w.emulator.log.clear();
    await Promise.all(stacks.splice(0).map((h) => h.stop()));
    for (const uuid of w.cloudInstances()) await w.api.instances.destroy(uuid);
  });

  /** A stack of its own (a provider process), with `more` stack config. */
  const stack = async (more: Props = {}, key = KEY): Promise<Harness> => {
    const h = await gpucloudHarness({ door, config: providerConfig(w.emu.url, key, { ...CONFIG, ...more }) });
    stacks.push(h);
    return h;
  };
  const named = (h: Harness, name: string, more: Props = {}, olds: Props = {}) =>
    h.checked("Instance", { ...w.spec, [RESOURCE_NAME_KEY]: name, ...more }, olds);
  const titles = () => Object.fromEntries(titlesIn(w.emulator));
  const calls = (path: string) => w.emulator.log.list().filter((r) => r.path === path).length;

  it("tells the person waiting what a lost create answer waits for, and until when", async () => {
    const h = await stack();
    w.emulator.faults.add({ path: CREATE, kind: "drop_after_commit", count: 1 });
    const state = await w.advancing(h.create("Instance", await named(h, "said", { title: "said" })));
    const progress = shown(h, door, "progress");
    const lost = 'Creating instance "said": the answer to the create call was lost';
    expect(progress).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(
            `^${lost} .*; waiting for the instance list to show whether the cloud made the instance: the cloud may still carry the call out until ${CLOCK} \\(about \\d+ (ms|s)\\)\\.$`,
          ),
        ),
        expect.stringMatching(
          new RegExp(
            `^${lost} .*; instance ${state.id} appeared untitled; it is claimed once no other deployer that got its create answer can still title it, until ${CLOCK} `,
          ),
        ),
        expect.stringMatching(
          new RegExp(
            `^${lost} .*; claiming instance ${state.id}, which appeared untitled: decided by ${CLOCK} at the latest\\.$`,
          ),
        ),
      ]),
    );
    if (door === "native") {
      const urn = h.urn("Instance");
      expect(h.engineMessages.filter((m) => m.ephemeral).map((m) => m.urn)).toEqual(
        expect.arrayContaining([urn]),
      );
      expect(new Set(h.engineMessages.filter((m) => m.ephemeral).map((m) => m.urn))).toEqual(new Set([urn]));
    }
    expect(titles()).toEqual({ [state.id]: "said" });
  });

  it("with gpucloud:sharedAccount false, claims what a lost answer made without waiting for other deployers", async () => {
    const h = await stack({ "gpucloud:sharedAccount": "false" });
    w.emulator.faults.add({ path: CREATE, kind: "drop_after_commit", count: 1 });
    const state = await w.advancing(h.create("Instance", await named(h, "alone", { title: "alone" })));
    const progress = shown(h, door, "progress");
    expect(progress).toEqual(
      expect.arrayContaining([expect.stringContaining(`claiming instance ${state.id}`)]),
    );
    expect(progress.filter((p) => p.includes("no other deployer"))).toEqual([]);
    expect(titles()).toEqual({ [state.id]: "alone" });
  });

  it("hands the engine an instance whose title the cloud will not write after one claim of it, and the next up writes it", async () => {
    const h = await stack();
    const news = await named(h, "unmarked");
    w.emulator.faults.add({ path: TITLE, kind: "http_500", probability: 1 });
    const failed = await w.advancing(h.create("Instance", news)).catch((e: unknown) => e);
    w.emulator.faults.clear();
    const failure = initFailure(failed);
    const [made] = Object.keys(titles());
    expect(failure).toMatchObject({ id: made, properties: { instanceUuid: made, title: "" } });
    expect(failure?.message).toMatch(/could not be given its title.*kept in the stack/);
    expect(titles()).toEqual({ [made]: "" });

    // The next up: Check keeps the state's mark, Diff sees the title the cloud does not show, Update writes it.
    const state: ResourceState = { id: made, inputs: news, outputs: failure!.properties };
    const again = await named(h, "unmarked", {}, news);
    expect(again.title).toBe(news.title);
    expect(await h.diff("Instance", made, state.outputs, again)).toMatchObject({
      changes: "some",
      replaces: [],
    });
    await w.advancing(h.update("Instance", state, again));
    expect(titles()).toEqual({ [made]: news.title });
  });

  it("hands the engine its instance promptly while the title writes fail 25 times in a row, and the next up writes the mark", async () => {
    const h = await stack();
    const news = await named(h, "flaky-title");
    const FAILURES = 25;
    w.emulator.faults.add({ path: TITLE, kind: "http_500", count: FAILURES });
    const failure = initFailure(await w.advancing(h.create("Instance", news)).catch((e: unknown) => e));
    const [made] = Object.keys(titles());
    expect(failure).toMatchObject({ id: made, properties: { instanceUuid: made, title: "" } });
    // Promptly: the create did not wait for the cloud to take a title write again.
    expect(calls(TITLE)).toBeLessThan(FAILURES);

    const again = await named(h, "flaky-title", {}, news);
    const state: ResourceState = { id: made, inputs: news, outputs: failure!.properties };
    w.emulator.faults.clear();
    await w.advancing(h.update("Instance", state, again));
    expect(titles()).toEqual({ [made]: news.title });
  });

  it("never lets a lost create take an instance whose title a person cleared, and restores that mark at refresh and up", async () => {
    const [a, b] = [await stack(), await stack({}, OTHER_KEY)];
    const aInputs = await named(a, "a");
    const bInputs = await named(b, "b");
    // B's create is lost (nothing made); while its window is open, A creates the same spec and marks it,
    // B's recovery lists it titled, and then a person clears its title.
    let aCreated: Promise<ResourceState> | undefined;
    let cleared = false;
    let seenTitledByB = false;
    const bKey = fingerprint(OTHER_KEY);
    const undo = onCalls(w.emulator, (call) => {
      if (call.key !== bKey) return;
      if (call.path === CREATE) aCreated ??= w.advancing(a.create("Instance", aInputs));
      if (call.path !== LIST || cleared) return;
      const aTitled = Object.entries(titles()).find(([, title]) => title === aInputs.title);
      // A list call of B arriving after another one found A's instance titled: that one has answered.
      if (aTitled && seenTitledByB) {
        cleared = true;
        void other.instances.updateTitle(aTitled[0], "");
      }
      if (aTitled) seenTitledByB = true;
    });
    w.emulator.faults.add({ path: CREATE, kind: "reset", count: 1 });
    let bState: ResourceState;
    try {
      bState = await w.advancing(b.create("Instance", bInputs));
    } finally {
      undo();
    }
    const aState = await aCreated!;
    expect(cleared).toBe(true);
    expect(bState.id).not.toBe(aState.id);
    expect(titles()).toEqual({ [aState.id]: "", [bState.id]: bInputs.title });

    // A's refresh shows the title gone, and keeps the mark to restore; A's next up writes it back.
    const refreshed = await a.refresh("Instance", aState);
    expect(refreshed.outputs.title).toBe("");
    const next = await named(a, "a", {}, refreshed.inputs);
    expect(next.title).toBe(aInputs.title);
    const diff = await a.diff("Instance", refreshed.id, refreshed.outputs, next);
    expect(diff).toMatchObject({ changes: "some", replaces: [] });
    await w.advancing(a.update("Instance", refreshed, next));
    expect(titles()).toEqual({ [aState.id]: aInputs.title, [bState.id]: bInputs.title });
  });

  it("catches and destroys the instance a cloud slower than three request timeouts made late, keeping one, and says so", async () => {
    const h = await stack();
    const undo = onCalls(w.emulator, (call) => {
      // Every create of this stack is carried out 2.5 s after it arrives: five request timeouts.
      if (call.path === CREATE)
        w.emulator.faults.add({ path: CREATE, kind: "late_commit", ms: 2500, count: 1 });
    });
    let state: ResourceState;
    try {
      state = await w.advancing(h.create("Instance", await named(h, "slow", { title: "slow" })));
    } finally {
      undo();
    }
    expect(calls(CREATE)).toBeGreaterThan(1);
    expect(titles()).toEqual({ [state.id]: "slow" });
    const warnings = shown(h, door, "warning");
    expect(warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^The cloud carried out a create call of .* up to [\d.]+ s after it was sent \(instance \S+\), later than the 1.5 s the recovery of lost answers allows for/,
        ),
        expect.stringMatching(
          /^Instance \S+ was made by a create call of .* that the cloud carried out later than 1.5 s \(3 x gpucloud:requestTimeoutMs\) after it was sent.*it was claimed and destroyed, so nothing is left billing/,
        ),
      ]),
    );
  });

  it("fails the create naming a late instance it cannot claim, keeping its own in the stack, never a silent success", async () => {
    // The claim tokens the late watch writes never reach the cloud: its claim cannot be decided.
    const gateway = await proxy(w.emu.url, {
      answer: (path, body) =>
        path.endsWith(TITLE) && (JSON.parse(body) as { title?: string }).title?.startsWith(CLAIM_PREFIX)
          ? { status: 500, json: { code: 500, msg: "system error" } }
          : undefined,
    });
    const h = await gpucloudHarness({ door, config: providerConfig(gateway.url, KEY, CONFIG) });
    stacks.push(h);
    let creates = 0;
    // The first create is carried out 2.5 s after it arrives (five request timeouts), the next at once.
    const undo = onCalls(w.emulator, (call) => {
      if (call.path === CREATE && ++creates === 1)
        w.emulator.faults.add({ path: CREATE, kind: "late_commit", ms: 2500, count: 1 });
    });
    let failed: unknown;
    try {
      const create = h
        .create("Instance", await named(h, "stuck", { title: "stuck" }))
        .catch((e: unknown) => e);
      // The emulator's clock stands still until both instances exist: the create's own one cannot boot, so
      // the create is still under way when the late one appears, whatever the machine's load.
      while (w.cloudInstances().length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
      failed = await w.advancing(create);
    } finally {
      undo();
      await gateway.close();
    }
    const failure = initFailure(failed);
    const kept = Object.entries(titles()).find(([, title]) => title === "stuck")?.[0];
    const late = Object.keys(titles()).find((uuid) => uuid !== kept);
    expect(kept).toBeDefined();
    expect(late).toBeDefined();
    expect(failure).toMatchObject({ id: kept });
    expect(failure?.message).toContain(
      `may have been carried out later than 1.5 s (3 x gpucloud:requestTimeoutMs) after it was sent`,
    );
    expect(failure?.message).toContain(
      `${late} (instance ${late} stayed untitled past the grace, but no claim of it was decided`,
    );
    expect(failure?.message).toContain(`Instance ${kept} was made and is kept in the stack`);
  });
});
