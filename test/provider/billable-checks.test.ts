/**
 * Every check that can be made runs before the first call that bills (a create, a start-up) or changes
 * anything: an Instance operation that fails on a rule the provider can know beforehand leaves the cloud
 * as it was, and the emulator's request log shows no such call. Each case fails at apply time, past
 * `check` (which refuses what it can judge without the cloud).
 */
import type { ResourceState } from "../harness";
import { startWorld, type World } from "../support/world";

/** Calls that bill or change something; a refused operation makes none of them. */
const CHANGING_CALLS = [
  "/instance/create_by_pod",
  "/instance/create_by_image",
  "/instance/startup",
  "/instance/restart",
  "/instance/shutdown",
  "/instance/update_title",
  "/instance/shutdown_timer",
  "/instance/destroy",
];

describe("Instance checks before anything bills", () => {
  let w: World;
  beforeAll(async () => (w = await startWorld()));
  afterAll(() => w.stop());
  beforeEach(() => w.emu.admin("POST", "/reset"));

  /** A time the cloud finds 2 minutes ahead and this machine finds in the future (the cloud is not behind). */
  async function twoMinutesAheadOfTheCloud(): Promise<number> {
    const local = Math.floor(Date.now() / 1000);
    const cloud = await w.emu.now();
    if (cloud < local) await w.emu.advance(local - cloud);
    return Math.max(cloud, local) + 120;
  }

  const created = async (inputs: Record<string, unknown>): Promise<ResourceState> =>
    w.advancing(w.h.create("Instance", await w.h.checked("Instance", { ...w.spec, ...inputs })));

  /** Runs `operation` after clearing the request log; it must fail with `message` and change nothing. */
  async function refusedWithoutChanges(operation: () => Promise<unknown>, message: RegExp): Promise<void> {
    const before = JSON.stringify((await w.emu.admin("GET", "/snapshot")).body);
    await w.emu.admin("DELETE", "/requests");
    await expect(operation()).rejects.toThrow(message);
    const requests = (await w.emu.admin("GET", "/requests")).body.requests as { path: string }[];
    expect(requests.map((r) => r.path).filter((p) => CHANGING_CALLS.includes(p))).toEqual([]);
    expect(JSON.stringify((await w.emu.admin("GET", "/snapshot")).body)).toBe(before);
  }

  it("refuses a create from a pod whose shutdownAt is too close on the cloud's clock", async () => {
    const at = await twoMinutesAheadOfTheCloud();
    const inputs = await w.h.checked("Instance", { ...w.spec, shutdownAt: at });
    await refusedWithoutChanges(() => w.h.create("Instance", inputs), /less than 5 minutes ahead/);
  });

  it("refuses a create from an image whose shutdownAt is too close on the cloud's clock", async () => {
    const [image] = (await w.api.catalogue.marketImages({ page: 1, page_size: 1 })).image_list;
    const at = await twoMinutesAheadOfTheCloud();
    const inputs = await w.h.checked("Instance", {
      imageUuid: image.uuid,
      gpuUuid: w.gpu4090,
      gpuNums: 1,
      shutdownAt: at,
    });
    await refusedWithoutChanges(() => w.h.create("Instance", inputs), /less than 5 minutes ahead/);
  });

  it("refuses a start-up with a new title and a too close shutdownAt: neither starts nor renames", async () => {
    const stopped = await created({ running: false, title: "before" });
    const at = await twoMinutesAheadOfTheCloud();
    const news = await w.h.checked("Instance", { ...w.spec, title: "after", shutdownAt: at }, stopped.inputs);
    await refusedWithoutChanges(() => w.h.update("Instance", stopped, news), /less than 5 minutes ahead/);
  });

  it("refuses moving a running instance's shutdownAt too close: the old timer stays", async () => {
    // A day ahead, not an hour: created() moves the cloud 10 s every 10 ms until the create returns.
    const running = await created({ shutdownAt: (await twoMinutesAheadOfTheCloud()) + 24 * 3600 });
    const at = await twoMinutesAheadOfTheCloud();
    const news = await w.h.checked("Instance", { ...running.inputs, shutdownAt: at }, running.inputs);
    await refusedWithoutChanges(() => w.h.update("Instance", running, news), /less than 5 minutes ahead/);
  });

  it("refuses to adopt an instance that does not match the program before starting it", async () => {
    const stopped = await created({ running: false });
    const inputs = await w.h.checked("Instance", {
      ...w.spec,
      gpuNums: 2,
      adoptInstanceUuid: stopped.id,
    });
    await refusedWithoutChanges(
      () => w.h.create("Instance", inputs),
      /gpuNums is 2 in your program but 1 on the instance/,
    );
  });

  it("refuses to adopt an instance that does not exist", async () => {
    const inputs = await w.h.checked("Instance", { ...w.spec, adoptInstanceUuid: "ins-nope" });
    await refusedWithoutChanges(
      () => w.h.create("Instance", inputs),
      /does not exist or belongs to another user/,
    );
  });
});
