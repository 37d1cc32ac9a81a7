/**
 * Power changes whose answers are lost (provider/resources/instance/power.ts): the startup and shutdown
 * calls are never resent by the SDK, so the provider reads the instance back. Each case states what the
 * cloud did and checks the state, the cloud and how many power calls the emulator's request log holds.
 * The provider's request timeout is 0.5 s, so the time in which the cloud may still carry out a held call
 * is 1 s: that wait runs on the real clock, the instance's transitions on the emulator's, moved by the test.
 */
import type { Props, ResourceState } from "../harness";
import { initFailure } from "../support/init-failure";
import { DOORS } from "../support/providers";
import { startWorld, type World } from "../support/world";

const CONFIG = { "gpucloud:requestTimeoutMs": "500" };
const SHUTDOWN = "/instance/shutdown";
const STARTUP = "/instance/startup";
/** What a Pulumi user is told to do about a change whose outcome stayed unsettled. */
const NEXT_STEP = "Run `pulumi refresh` to see the instance's status, then `pulumi up`.";
const AFTER_COMMIT = ["drop_after_commit", "http_500_after_commit"] as const;

jest.setTimeout(120_000);

describe.each(DOORS)("power changes whose answers are lost, through the %s door", (door) => {
  let w: World;
  beforeAll(async () => (w = await startWorld({ door, config: CONFIG })));
  afterAll(() => w?.stop());
  beforeEach(async () => {
    await w.emu.admin("POST", "/reset");
    await w.emu.admin("DELETE", "/faults");
  });

  const inputs = (more: Props = {}, olds: Props = {}) =>
    w.h.checked("Instance", { ...w.spec, title: "power", ...more }, olds);
  const created = async (more: Props = {}): Promise<ResourceState> => {
    const state = await w.advancing(w.h.create("Instance", await inputs(more)));
    await w.emu.admin("DELETE", "/requests");
    return state;
  };
  const update = async (state: ResourceState, more: Props) =>
    w.advancing(w.h.update("Instance", state, await inputs(more, state.inputs)));
  const fault = (path: string, kind: string, more: Props = {}) =>
    w.emu.admin("POST", "/faults", { path, kind, count: 1, ...more });
  const calls = async (path: string) =>
    ((await w.emu.admin("GET", "/requests")).body.requests as { path: string }[]).filter(
      (r) => r.path === path,
    ).length;
  const cloudStatus = async (uuid: string) => (await w.api.instances.info(uuid)).status;

  describe.each(AFTER_COMMIT)("when the cloud did the work and the answer was lost (%s)", (kind) => {
    it("stops a running instance, sending shutdown once", async () => {
      const state = await created();
      await fault(SHUTDOWN, kind);
      const stopped = await update(state, { running: false });
      expect(stopped.outputs).toMatchObject({ status: 22, running: false });
      expect(await cloudStatus(state.id)).toBe(22);
      expect(await calls(SHUTDOWN)).toBe(1);
    });

    it("starts a stopped instance, sending startup once", async () => {
      const state = await created({ running: false });
      await fault(STARTUP, kind);
      const started = await update(state, { running: true });
      expect(started.outputs).toMatchObject({ status: 2, running: true });
      expect(await cloudStatus(state.id)).toBe(2);
      expect(await calls(STARTUP)).toBe(1);
    });

    it("creates with running: false, keeps the instance and ends stopped", async () => {
      await w.emu.admin("DELETE", "/requests");
      await fault(SHUTDOWN, kind);
      const state = await w.advancing(w.h.create("Instance", await inputs({ running: false })));
      expect(state.outputs).toMatchObject({ status: 22, running: false, title: "power" });
      expect(await w.instanceUuids()).toEqual([state.id]);
      expect(await cloudStatus(state.id)).toBe(22);
      expect(await calls(SHUTDOWN)).toBe(1);
      expect(await calls("/instance/destroy")).toBe(0);
    });
  });

  it("does not send shutdown again when the cloud carries it out after the answer timed out", async () => {
    const state = await created();
    // Held past the 0.5 s request timeout, carried out inside the 1 s after it.
    await fault(SHUTDOWN, "late_commit", { ms: 750 });
    const stopped = await update(state, { running: false });
    expect(stopped.outputs).toMatchObject({ status: 22, running: false });
    expect(await calls(SHUTDOWN)).toBe(1);
  });

  it("sends startup once more when the lost call did nothing, and the instance runs", async () => {
    const state = await created({ running: false });
    await fault(STARTUP, "reset");
    const started = await update(state, { running: true });
    expect(started.outputs).toMatchObject({ status: 2, running: true });
    expect(await calls(STARTUP)).toBe(2);
  });

  it("fails an update whose shutdown did nothing twice, in Pulumi's terms, without a third call", async () => {
    const state = await created();
    await fault(SHUTDOWN, "reset", { count: 2 });
    const message = await update(state, { running: false }).then(
      () => "it succeeded",
      (e: unknown) => String(e),
    );
    expect(message).toContain(
      `Could not stop instance ${state.id}: the answers to both shutdown calls were lost`,
    );
    expect(message).toContain(NEXT_STEP);
    expect(message).not.toMatch(/client\./);
    expect(await calls(SHUTDOWN)).toBe(2);
    expect(await cloudStatus(state.id)).toBe(2);
  });

  it("keeps the instance a create made when its shutdown stays unsettled", async () => {
    await w.emu.admin("DELETE", "/requests");
    await fault(SHUTDOWN, "reset", { count: 2 });
    const err = await w.advancing(w.h.create("Instance", await inputs({ running: false }))).then(
      () => undefined,
      (e: unknown) => e,
    );
    const failure = initFailure(err);
    const [kept] = await w.instanceUuids();
    expect(failure).toMatchObject({ id: kept, properties: { instanceUuid: kept, status: 2 } });
    expect(failure!.message).toContain(`the new instance ${kept} could not be stopped`);
    expect(failure!.message).toContain(`The instance is kept in the stack, not destroyed. ${NEXT_STEP}`);
    expect(failure!.message).not.toMatch(/client\./);
    expect(await calls(SHUTDOWN)).toBe(2);
    expect(await calls("/instance/destroy")).toBe(0);
  });
});
