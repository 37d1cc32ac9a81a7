/**
 * The scheduled shutdown (shutdownAt) at apply time: the 5-minute lead on the cloud's clock, checked
 * before anything bills, and timers that never outlive the power state they belong to.
 */
import type { ResourceState } from "../harness";
import { startWorld, type World } from "../support/world";

const HOUR = 3600;

describe("Instance shutdownAt against the emulator", () => {
  let w: World;
  beforeAll(async () => (w = await startWorld()));
  afterAll(() => w.stop());
  beforeEach(() => w.emu.admin("POST", "/reset"));

  /** An hour past both clocks: the emulator's (moved by earlier tests) and this machine's. */
  const anHourAhead = async () => Math.max(await w.emu.now(), Math.floor(Date.now() / 1000)) + HOUR;
  const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace(".000Z", "Z");
  const calls = async (path: string) =>
    ((await w.emu.admin("GET", "/requests")).body.requests as { path: string }[]).filter(
      (r) => r.path === path,
    );
  const created = async (inputs: Record<string, unknown>): Promise<ResourceState> =>
    w.advancing(w.h.create("Instance", await w.h.checked("Instance", { ...w.spec, ...inputs })));

  it("after a scheduled shutdown fired, refuses the next up before starting the instance", async () => {
    const at = await anHourAhead();
    const state = await created({ shutdownAt: at });
    await w.emu.advance(2 * HOUR);
    const refreshed = await w.h.refresh("Instance", state);
    expect(refreshed.outputs).toMatchObject({ status: 22, running: false });
    await w.emu.admin("DELETE", "/requests");

    // This machine's clock is behind the emulator's, so check still finds the time in the future.
    const news = await w.h.checked("Instance", state.inputs, refreshed.inputs);
    const update = w.h.update("Instance", refreshed, news);
    await expect(update).rejects.toThrow(
      `shutdownAt ${iso(at)} is less than 5 minutes ahead of now (${iso(await w.emu.now())} by the cloud's clock)`,
    );
    expect(await calls("/instance/startup")).toEqual([]);
    expect((await w.api.instances.info(state.id)).status).toBe(22);
  });

  it("measures the 5-minute lead on the cloud's clock: a cloud a day ahead refuses before anything is created", async () => {
    await w.emu.advance(24 * HOUR);
    await w.emu.admin("DELETE", "/requests");
    const soonHere = Math.floor(Date.now() / 1000) + HOUR;
    const inputs = await w.h.checked("Instance", { ...w.spec, shutdownAt: soonHere });
    await expect(w.h.create("Instance", inputs)).rejects.toThrow(
      new RegExp(
        `shutdownAt ${iso(soonHere)} is less than 5 minutes ahead of now \\(.*Z by the cloud's clock\\)`,
      ),
    );
    expect(await calls("/instance/create_by_pod")).toEqual([]);
    expect(await w.instanceUuids()).toEqual([]);
  });

  it("cancels the timer when a running instance with shutdownAt is updated to running: false", async () => {
    const state = await created({ shutdownAt: await anHourAhead() });
    const { shutdownAt: _timer, ...stopped } = state.inputs;
    const news = await w.h.checked("Instance", { ...stopped, running: false }, state.inputs);
    const after = await w.advancing(w.h.update("Instance", state, news));
    expect(after.outputs).toMatchObject({ running: false, status: 22 });
    expect((await w.api.instances.info(state.id)).shutdown_regular).toEqual({
      shutdown_time: 0,
      enable: false,
    });
    await w.h.expectNoDrift("Instance", after);
  });

  it("sees no drift in a timer left on a stopped instance, and cancels it when the program starts it", async () => {
    const state = await created({ running: true });
    await w.api.instances.shutdownTimer(state.id, { enable: true, shutdown_time: await anHourAhead() });
    await w.api.instances.shutdown(state.id);
    await w.emu.advance(10);
    const program = await w.h.checked("Instance", { ...w.spec, running: false }, state.inputs);
    const stopped = { ...(await w.h.refresh("Instance", state)), inputs: program };
    expect(stopped.outputs).toMatchObject({ status: 22, shutdownRegular: { enable: true } });
    await w.h.expectNoDrift("Instance", stopped);

    const started = await w.advancing(
      w.h.update("Instance", stopped, await w.h.checked("Instance", w.spec, program)),
    );
    expect(started.outputs).toMatchObject({ status: 2, shutdownRegular: { enable: false } });
    await w.h.expectNoDrift("Instance", started);
  });
});
