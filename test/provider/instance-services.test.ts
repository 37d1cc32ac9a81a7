/**
 * waitForServices: create and start-up return once every web service of the instance answers. The
 * emulator serves each instance's web services 90 simulated seconds after it runs; its clock is frozen,
 * so nothing becomes ready unless the test moves it, and the test moves it only after seeing the provider
 * poll (its waits read the instance, then ask the services, every 10 ms). A create declared stopped
 * (`running: false`) never waits for them: it stops the instance as soon as it runs.
 */
import type { Instance as CloudInstance } from "pulumi-gpucloud/sdk";
import { webServices } from "../../provider/resources/instance/services";
import { startWorld, type World } from "../support/world";

const SERVICES_SECONDS = 90;
/** The emulator's default boot time. */
const BOOT_SECONDS = 60;

describe("Instance waitForServices against the emulator", () => {
  let w: World;
  beforeAll(async () => (w = await startWorld({ emulator: { durations: { services: SERVICES_SECONDS } } })));
  afterAll(() => w.stop());
  beforeEach(() => w.emu.admin("POST", "/reset"));

  /** API calls the emulator logged so far (the admin API is not logged, so looking adds none). */
  const logged = async () =>
    (await w.emu.admin("GET", "/requests")).body.requests as { path: string; status: number | null }[];
  const instanceReads = async () =>
    (await logged()).filter((r) => r.path === "/instance/list" || r.path === "/instance/info").length;

  async function until(condition: () => Promise<boolean>): Promise<void> {
    while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  /** Tracks whether `operation` has settled, without letting its failure go unhandled. */
  function watch<T>(operation: Promise<T>) {
    const watched = { settled: false, operation };
    operation.then(
      () => (watched.settled = true),
      () => (watched.settled = true),
    );
    return watched;
  }

  /** Moves the clock, then waits until the provider read the instance `polls` more times (or gave up). */
  async function advanceThenPoll(seconds: number, polls: number, operation: Promise<unknown>): Promise<void> {
    await w.emu.advance(seconds);
    const from = await instanceReads();
    await Promise.race([
      until(async () => (await instanceReads()) >= from + polls),
      operation.catch(() => {}),
    ]);
  }

  async function theNewInstance(): Promise<{ uuid: string; url: string }> {
    await until(async () => w.cloudInstances().length === 1);
    const [uuid] = w.cloudInstances();
    const web = (await w.api.instances.info(uuid)).server_map!.find((e) => e.port_type === "http")!;
    return { uuid, url: web.url! };
  }

  const status = async (url: string) => (await fetch(url)).status;

  it("returns from create only once the web service answers, 90 s after the instance runs", async () => {
    const create = watch(
      w.h.create("Instance", await w.h.checked("Instance", { ...w.spec, waitForServices: true })),
    );
    const { url } = await theNewInstance();

    await advanceThenPoll(BOOT_SECONDS, 3, create.operation);
    expect(create.settled).toBe(false);
    expect(await status(url)).toBe(503);
    await advanceThenPoll(SERVICES_SECONDS - 1, 3, create.operation);
    expect(create.settled).toBe(false);

    await w.emu.advance(1);
    const state = await create.operation;
    expect(await status(url)).toBe(200);
    expect(state.outputs).toMatchObject({ status: 2, waitForServices: true });
    await w.h.expectNoDrift("Instance", state);
  });

  it("without waitForServices returns as soon as the instance runs, its service still starting", async () => {
    const create = w.h.create("Instance", await w.h.checked("Instance", w.spec));
    const { url } = await theNewInstance();
    await w.emu.advance(BOOT_SECONDS);
    await create;
    expect(await status(url)).toBe(503);
  });

  it("stops an instance created with running: false as soon as the cloud lets it, never waiting for its services", async () => {
    // The cloud stops only a running instance: the earliest stop is the first poll that sees it run.
    const create = watch(
      w.h.create(
        "Instance",
        await w.h.checked("Instance", { ...w.spec, running: false, waitForServices: true }),
      ),
    );
    const { url } = await theNewInstance();
    await w.emu.advance(BOOT_SECONDS);
    // The clock stays still: a create that waited for the services would never send the stop.
    await until(async () =>
      (await logged()).some((r) => r.path === "/instance/shutdown" && r.status === 200),
    );
    expect(create.settled).toBe(false);
    // Its web service never answered: a gateway's 503 while it started, 502 once it stops.
    expect(await status(url)).toBeGreaterThanOrEqual(500);
    await w.emu.advance(10);
    const state = await create.operation;
    expect(state.outputs).toMatchObject({ status: 22, running: false });
  });

  it("fails the create cleanly when the service does not answer within waitTimeoutSeconds of the create: nothing is left billing", async () => {
    // The create's 120 s run from the create call: 60 s of boot, then 60 s for a service that needs 90.
    const inputs = await w.h.checked("Instance", {
      ...w.spec,
      waitForServices: true,
      waitTimeoutSeconds: 120,
    });
    const create = watch(w.h.create("Instance", inputs));
    await theNewInstance();
    await advanceThenPoll(BOOT_SECONDS, 2, create.operation);
    // 110 s, not 119: the provider's cloud clock is the last Date header plus real time elapsed since, so
    // a deadline 1 s of real time away passes during a stall of a loaded machine; 10 s does not.
    await advanceThenPoll(50, 2, create.operation);
    expect(create.settled).toBe(false);
    // 121 s after the create call, 61 s after the instance runs: the service would answer at 90.
    await w.emu.advance(11);
    await expect(create.operation).rejects.toThrow(
      /did not all answer within waitTimeoutSeconds \(120 s, counted from the start of the create or start-up\); last seen: ComfyUI \(.*\): HTTP 503\..*was destroyed so nothing is left billing/s,
    );
    expect(w.cloudInstances()).toEqual([]);
  });

  it("counts waitTimeoutSeconds from the instance's making, not from when its mark landed", async () => {
    // The mark (the title write) is held until the clock has moved 60 s: the create's 120 s still end at
    // 120 s of the cloud's clock after the instance was made, not 120 s after the mark landed.
    w.emulator.faults.add({ path: "/instance/update_title", kind: "delay", count: 1, ms: 1500 });
    const title = "services-late-mark";
    const inputs = await w.h.checked("Instance", {
      ...w.spec,
      title,
      waitForServices: true,
      waitTimeoutSeconds: 120,
    });
    const create = watch(w.h.create("Instance", inputs));
    const { uuid } = await theNewInstance();
    await w.emu.advance(BOOT_SECONDS);
    await until(async () => (await w.api.instances.info(uuid)).title === title);
    await advanceThenPoll(50, 2, create.operation);
    expect(create.settled).toBe(false);
    await w.emu.advance(11);
    await expect(create.operation).rejects.toThrow(
      /did not all answer within waitTimeoutSeconds \(120 s, counted from the start of the create or start-up\).*was destroyed so nothing is left billing/s,
    );
    expect(w.cloudInstances()).toEqual([]);
  });

  it("fails the create at once when the instance stops while its services start", async () => {
    const create = watch(
      w.h.create("Instance", await w.h.checked("Instance", { ...w.spec, waitForServices: true })),
    );
    const { uuid } = await theNewInstance();
    await advanceThenPoll(BOOT_SECONDS, 2, create.operation);
    await w.api.instances.shutdown(uuid);
    await expect(create.operation).rejects.toThrow(
      // Whether the stop lands in the boot wait or the services wait depends on which poll sees it first.
      /stopped (running while they started|while this waited) \(now status 21/,
    );
    expect(w.cloudInstances()).toEqual([]);
  });

  it("fails the create at once when the instance stops abnormally while it boots, not at the end of its wait", async () => {
    const create = watch(w.h.create("Instance", await w.h.checked("Instance", w.spec)));
    const { uuid } = await theNewInstance();
    const from = await instanceReads();
    await until(async () => (await instanceReads()) >= from + 2);
    expect(create.settled).toBe(false);
    // A boot that fails: the API cannot do this on demand, the emulator's admin API can.
    await w.emu.admin("POST", `/instances/${uuid}/force`, { status: 23 });
    await expect(create.operation).rejects.toThrow(
      new RegExp(`instance ${uuid} to run: it stopped while this waited \\(now status 23`),
    );
    expect(w.cloudInstances()).toEqual([]);
  });

  it("waits for the services on start-up (running false to true)", async () => {
    const created = await w.advancing(
      w.h.create(
        "Instance",
        await w.h.checked("Instance", { ...w.spec, running: false, waitForServices: true }),
      ),
    );
    const { url } = await theNewInstance();
    const start = watch(
      w.h.update("Instance", created, await w.h.checked("Instance", { ...w.spec, waitForServices: true })),
    );
    await until(async () => (await logged()).some((r) => r.path === "/instance/startup" && r.status === 200));
    await advanceThenPoll(30, 3, start.operation);
    expect(start.settled).toBe(false);
    expect(await status(url)).toBe(503);
    await w.emu.advance(SERVICES_SECONDS);
    const started = await start.operation;
    expect(started.outputs).toMatchObject({ status: 2 });
    expect(await status(url)).toBe(200);
  });
});

describe("the web services a wait covers", () => {
  const record = (server_map: unknown[]) =>
    ({ instance_uuid: "ins-1", status: 2, server_map }) as CloudInstance;

  it("asks only http entries with an http(s) address, and shows each without its token or credentials", () => {
    const services = webServices(
      record([
        { title: "JupyterLab", port_type: "http", url: "https://u:p@ins-1-8888.example/lab?token=s3cret#x" },
        { title: "", port_type: "http", url: "http://ins-1-7860.example/" },
        { title: "SSH", port_type: "tcp", url: "ssh://ins-1.example:22" },
        { title: "Broken", port_type: "http", url: "ftp://ins-1.example/" },
      ]),
    );
    expect(services).toEqual([
      {
        title: "JupyterLab",
        url: "https://u:p@ins-1-8888.example/lab?token=s3cret#x",
        shown: "https://ins-1-8888.example/lab",
      },
      { title: "service 2", url: "http://ins-1-7860.example/", shown: "http://ins-1-7860.example/" },
    ]);
  });
});
