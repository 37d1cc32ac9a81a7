/**
 * Cancel (Ctrl-C in `pulumi up`) through the native plugin: the operations under way stop at their next
 * wait and fail saying what they left behind, and the plugin starts nothing new. The emulator's clock is
 * frozen, so every wait here would run its whole waitTimeoutSeconds (900 s by default) without Cancel:
 * the jest timeout bounds each test, and the test waits on the emulator's request log, never on time.
 */
import { status } from "@grpc/grpc-js";
import { startNativeCloud, type NativeCloud } from "./cloud";
import { CallError, PluginProcess, type Props } from "./plugin";

jest.setTimeout(60_000);

interface Logged {
  method: string;
  path: string;
  status: number | null;
}

describe("Cancel through the native plugin", () => {
  let c: NativeCloud;
  const started: PluginProcess[] = [];
  beforeAll(async () => {
    c = await startNativeCloud();
  });
  afterEach(async () => {
    await c.emu.admin("DELETE", "/faults");
    for (const p of started.splice(0)) await p.stop();
  });
  afterAll(async () => {
    await c?.stop();
  });

  /** A plugin process of its own (a cancelled one takes no new calls), configured for the emulator. */
  async function freshPlugin(): Promise<PluginProcess> {
    const plugin = await PluginProcess.start();
    started.push(plugin);
    const { inputs } = await plugin.client.checkConfig({ ...c.config, requestTimeoutMs: "2000" });
    await plugin.client.configure(inputs);
    return plugin;
  }

  async function logged(): Promise<Logged[]> {
    return ((await c.emu.admin("GET", "/requests")).body as unknown as { requests: Logged[] }).requests;
  }

  /** Resolves once the emulator's request log holds a request `matches` accepts (it is read every 20 ms). */
  async function untilLogged(matches: (r: Logged) => boolean): Promise<Logged> {
    for (;;) {
      const found = (await logged()).find(matches);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async function failure(call: Promise<unknown>): Promise<CallError> {
    const err = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CallError);
    return err as CallError;
  }

  it("fails a create waiting for boot with an init failure carrying the instance, which a fresh plugin finishes", async () => {
    const plugin = await freshPlugin();
    const before = await c.instanceUuids();
    await c.emu.admin("DELETE", "/requests");
    const { inputs } = await plugin.client.check("Instance", { ...c.spec, title: "cancelled-create" });
    const creating = failure(plugin.client.create("Instance", inputs));
    // The create call was answered: the instance exists, and the create now waits for it to run.
    await untilLogged((r) => r.path.startsWith("/instance/create_by_pod") && r.status === 200);
    await plugin.client.cancel();
    const err = await creating;

    expect(err.message).toMatch(/^Could not create instance: the operation was cancelled/);
    expect(err.message).toContain("kept in the stack, not destroyed");
    // The instance exists: ErrorResourceInitFailed, which the engine reads before the code.
    expect(err.code).toBe(status.UNKNOWN);
    const init = err.initFailure!;
    expect(init).toBeDefined();
    expect(init.id).toMatch(/^ins-/);
    expect(init.properties).toMatchObject({ instanceUuid: init.id, podUuid: c.podUuid });
    const after = await c.instanceUuids();
    expect(after.filter((u) => !before.includes(u))).toEqual([init.id]);
    expect(after).toHaveLength(before.length + 1);

    // The next `pulumi up`, through another plugin process: the update finishes the instance.
    const next = await freshPlugin();
    const refreshed = await next.client.read("Instance", init.id, init.properties, init.inputs);
    expect(refreshed.id).toBe(init.id);
    const finished: Props = await c.advancing(
      next.client.update("Instance", init.id, init.properties, inputs),
    );
    expect(finished).toMatchObject({
      instanceUuid: init.id,
      statusName: "running",
      title: "cancelled-create",
    });
    expect(await c.instanceUuids()).toEqual(after);
  });

  it("fails a delete waiting for the instance to go, saying its destroy was accepted", async () => {
    const plugin = await freshPlugin();
    const { inputs } = await plugin.client.check("Instance", { ...c.spec, title: "cancelled-delete" });
    const made = await c.advancing(plugin.client.create("Instance", inputs));
    await c.emu.admin("DELETE", "/requests");
    // Every listing fails for a moment (503): the delete waits on, through them, for the instance to go.
    await c.emu.admin("POST", "/faults", { path: "/instance/list", kind: "http_503", probability: 1 });
    const deleting = failure(plugin.client.delete("Instance", made.id, made.outputs));
    await untilLogged((r) => r.path.startsWith("/instance/destroy") && r.status === 200);
    await untilLogged((r) => r.path.startsWith("/instance/list") && r.status === 503);
    await plugin.client.cancel();
    const err = await deleting;

    expect(err.message).toContain(
      `Could not delete instance ${made.id}: the destroy call was sent and accepted`,
    );
    expect(err.code).toBe(status.CANCELLED);
    expect(err.message).toMatch(
      /the operation was cancelled while waiting for instance \S+ to be gone; last seen: /,
    );
    // No listing got through since the destroy call, and the message says so rather than guessing.
    expect(err.message).toContain("last seen: no listing read yet");
    expect(err.initFailure).toBeUndefined();
    // One destroy call, never sent again by the cancelled delete.
    expect((await logged()).filter((r) => r.path.startsWith("/instance/destroy"))).toHaveLength(1);
  });

  it("refuses calls after Cancel with a clear message, sending nothing, and still answers GetPluginInfo", async () => {
    const plugin = await freshPlugin();
    await plugin.client.cancel();
    await c.emu.admin("DELETE", "/requests");
    const created = await failure(plugin.client.create("Instance", { ...c.spec, waitTimeoutSeconds: 900 }));
    expect(created.code).toBe(status.CANCELLED);
    expect(created.message).toMatch(/^the operation was cancelled: .*nothing was sent to the cloud/);
    const read = await failure(
      plugin.client.read("Instance", "ins-whatever", { title: "x" }, { title: "x" }),
    );
    expect(read.message).toMatch(/^the operation was cancelled/);
    const checked = await failure(plugin.client.check("Instance", c.spec));
    expect(checked.code).toBe(status.CANCELLED);
    expect(await plugin.client.pluginVersion()).toMatch(/^\d+\.\d+\.\d+/);
    expect(await logged()).toEqual([]);
  });
});
