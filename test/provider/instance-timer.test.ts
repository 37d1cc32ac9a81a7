/**
 * The scheduled shutdown (shutdownAt) at apply time: the 5-minute lead on the cloud's clock, checked
 * before anything bills, and timers that never outlive the power state they belong to.
 */
import type { ResourceState } from "../harness";
import { startWorld, type World } from "../support/world";

const HOUR = 3600;
const DAY = 24 * HOUR;

describe("Instance shutdownAt against the emulator", () => {
  let w: World;
  beforeAll(async () => (w = await startWorld()));
  afterAll(() => w.stop());
  beforeEach(() => w.emu.admin("POST", "/reset"));

  /**
   * A day past both clocks: the emulator's (moved by earlier tests) and this machine's. A day, not an
   * hour: `advancing` moves the cloud 10 s every 10 ms while the provider works, so an hour's lead is gone
   * after 3.6 s of a loaded machine, and these tests check what the timer does, not how near it may be.
   */
  const aDayAhead = async () => Math.max(await w.emu.now(), Math.floor(Date.now() / 1000)) + DAY;
  const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace(".000Z", "Z");
  const calls = async (path: string) =>
    ((await w.emu.admin("GET", "/requests")).body.requests as { path: string }[]).filter(
      (r) => r.path === path,
    );
  const created = async (inputs: Record<string, unknown>): Promise<ResourceState> =>
    w.advancing(w.h.create("Instance", await w.h.checked("Instance", { ...w.spec, ...inputs })));

  it("after a scheduled shutdown fired, refuses the next up before starting the instance", async () => {
    const at = await aDayAhead();
    const state = await created({ shutdownAt: at });
    await w.emu.advance(2 * DAY);
    const refreshed = await w.h.refresh("Instance", state);
    expect(refreshed.outputs).toMatchObject({ status: 22, running: false });
    await w.emu.admin("DELETE", "/requests");

    // This machine's clock is behind the emulator's, so check still finds the time in the future.
    const news = await w.h.checked("Instance", state.inputs, refreshed.inputs);
    const cloudNow = await w.emu.now();
    const update = w.h.update("Instance", refreshed, news);
    const refusal = await update.then(
      () => "",
      (err: Error) => err.message,
    );
    // The provider's cloud clock is the last Date header plus real time elapsed since: the second it
    // names is the frozen cloud's, or a later one after a stall of a loaded machine.
    const named = refusal.match(
      /shutdownAt (\S+) is already past, (\d+) h before now \((\S+) by the cloud's clock\)/,
    );
    expect(named?.[1]).toBe(iso(at));
    expect(Number(named?.[2])).toBe(Math.round((cloudNow - at) / HOUR));
    const seenAt = Date.parse(named?.[3] ?? "") / 1000;
    expect(seenAt).toBeGreaterThanOrEqual(cloudNow);
    expect(seenAt).toBeLessThanOrEqual(cloudNow + 2);
    expect(await calls("/instance/startup")).toEqual([]);
    expect((await w.api.instances.info(state.id)).status).toBe(22);
  });

  /**
   * The provider knows the cloud's clock from the Date of its latest answer, and no real cloud's clock
   * jumps: after a test moved the emulator's, one read (of an instance that is not there) shows it anew.
   */
  const providerReadsTheCloudClock = () =>
    w.h.read("Instance", { id: "i-not-there", inputs: w.spec, outputs: {} });

  it("measures the 5-minute lead on the cloud's clock: a cloud a day ahead refuses before anything is created", async () => {
    await w.emu.advance(24 * HOUR);
    await providerReadsTheCloudClock();
    await w.emu.admin("DELETE", "/requests");
    const soonHere = Math.floor(Date.now() / 1000) + HOUR;
    const inputs = await w.h.checked("Instance", { ...w.spec, shutdownAt: soonHere });
    // Past by however far earlier tests moved the cloud; by how much is the next test's to check.
    await expect(w.h.create("Instance", inputs)).rejects.toThrow(
      new RegExp(
        `shutdownAt ${iso(soonHere)} is already past, \\d+ (h|days) before now \\(.*Z by the cloud's clock\\)`,
      ),
    );
    expect(await calls("/instance/create_by_pod")).toEqual([]);
    expect(await w.instanceUuids()).toEqual([]);
  });

  /**
   * A time `offset` seconds from the cloud's now, after moving the cloud an hour past this machine's clock
   * (so a time the cloud has passed is still ahead here, where check judges it).
   */
  const onTheCloudAnHourAhead = async (offset: number) => {
    const here = Math.floor(Date.now() / 1000);
    await w.emu.advance(Math.max(0, here - (await w.emu.now())) + HOUR);
    await providerReadsTheCloudClock();
    await w.emu.admin("DELETE", "/requests");
    return (await w.emu.now()) + offset;
  };

  it("says a shutdownAt that the cloud's clock has passed is past, and by how much, not that it is too close", async () => {
    const tenMinutesAgo = await onTheCloudAnHourAhead(-600);
    const inputs = await w.h.checked("Instance", { ...w.spec, shutdownAt: tenMinutesAgo });
    const refusal = await w.h.create("Instance", inputs).then(
      () => "",
      (err: Error) => err.message,
    );
    expect(refusal).toContain(`shutdownAt ${iso(tenMinutesAgo)} is already past, 10 min before now (`);
    expect(refusal).toContain(
      "the cloud wants a scheduled shutdown at least 5 minutes ahead. Nothing was changed.",
    );
    expect(refusal).not.toContain("less than 5 minutes ahead");
    expect(await calls("/instance/create_by_pod")).toEqual([]);
  });

  it("says a shutdownAt that is still ahead, but by less than 5 minutes, is too close", async () => {
    const twoMinutesAhead = await onTheCloudAnHourAhead(120);
    const inputs = await w.h.checked("Instance", { ...w.spec, shutdownAt: twoMinutesAhead });
    await expect(w.h.create("Instance", inputs)).rejects.toThrow(
      new RegExp(
        `shutdownAt ${iso(twoMinutesAhead)} is less than 5 minutes ahead of now \\(.*Z by the cloud's clock\\)`,
      ),
    );
    expect(await calls("/instance/create_by_pod")).toEqual([]);
  });

  it("cancels the timer when a running instance with shutdownAt is updated to running: false", async () => {
    const state = await created({ shutdownAt: await aDayAhead() });
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
    await w.api.instances.shutdownTimer(state.id, { enable: true, shutdown_time: await aDayAhead() });
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
