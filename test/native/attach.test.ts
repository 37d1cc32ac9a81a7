/**
 * The plugin as `PULUMI_DEBUG_PROVIDERS=gpucloud:PORT pulumi ...` meets it: a person starts it with no
 * argument and reads its port; each command's engine then dials that port, sends Handshake without
 * directories, then Attach with its own address, and the plugin serves the command and runs on for the
 * next one. The engines here are stand-ins serving only Pulumi's Engine.Log, and the calls after Attach
 * are those the engine sends for a preview, an up and a destroy of an instance with its idle policy.
 */
import * as engproto from "@pulumi/pulumi/proto/engine_pb";
import { startNativeCloud, type NativeCloud } from "./cloud";
import { fakeEngine } from "./fake-engine";
import { UNKNOWN, urn, type Props } from "./plugin";

jest.setTimeout(120_000);

type Engine = Awaited<ReturnType<typeof fakeEngine>>;

describe("the plugin started by hand, attached to by each command's engine", () => {
  let c: NativeCloud;
  const engines: Engine[] = [];
  beforeAll(async () => {
    c = await startNativeCloud({ startedByHand: true });
  });
  afterAll(async () => {
    await c?.stop();
    for (const engine of engines) engine.close();
  });

  /**
   * A new command: its engine introduces itself as the engine does when it attaches (one older than
   * Handshake sends Attach alone), and configures the provider.
   */
  async function attachedEngine(options: { handshake: boolean } = { handshake: true }): Promise<Engine> {
    const engine = await fakeEngine();
    engines.push(engine);
    const client = c.plugin.client;
    if (options.handshake) {
      expect(await client.handshake(engine.address)).toEqual({
        acceptSecrets: true,
        acceptResources: false,
        acceptOutputs: false,
        supportsAutonamingConfiguration: true,
      });
    }
    await client.attach(engine.address);
    expect(await client.pluginVersion()).toMatch(/^\d+\.\d+\.\d+/);
    await client.configure((await client.checkConfig(c.config)).inputs);
    return engine;
  }

  const policyOf = (instanceUuid: unknown): Props => ({ instanceUuid, idlePeriodMinutes: 30 });

  let instance: { id: string; outputs: Props };
  let policy: { id: string; outputs: Props };

  it("prints its port alone when started without the engine's address", () => {
    expect(c.plugin.stdout).toBe(`${c.plugin.client.port}\n`);
  });

  it("previews, sending nothing to the cloud", async () => {
    await attachedEngine();
    const client = c.plugin.client;
    await c.emu.admin("DELETE", "/requests");
    const { inputs } = await client.check("Instance", { ...c.spec, title: "attached" });
    const planned = await client.create("Instance", inputs, { preview: true });
    expect(planned.outputs.instanceUuid).toBe(UNKNOWN);
    const checked = await client.check("IdleClosePolicy", policyOf(UNKNOWN), "idle");
    expect(checked.failures).toEqual([]);
    await client.create("IdleClosePolicy", checked.inputs, { preview: true, name: "idle" });
    const writes = Object.keys(await c.calls()).filter((call) => call.startsWith("POST"));
    expect(writes).toEqual([]);
  });

  it("ups from the next command's engine", async () => {
    await attachedEngine();
    const client = c.plugin.client;
    const { inputs } = await client.check("Instance", { ...c.spec, title: "attached" });
    instance = await c.advancing(client.create("Instance", inputs));
    const checked = await client.check("IdleClosePolicy", policyOf(instance.id), "idle");
    policy = await client.create("IdleClosePolicy", checked.inputs, { name: "idle" });
    expect(await c.instanceUuids()).toEqual([instance.id]);
    expect((await c.api.instances.info(instance.id)).title).toBe("attached");
  });

  it("destroys from a third, its warnings in that engine's log alone", async () => {
    const [previewing, upping] = engines;
    const destroying = await attachedEngine();
    // Destroyed in the console meanwhile: the policy's delete warns that it went with its instance.
    await c.advancing(c.api.instances.destroy(instance.id));
    await c.plugin.client.delete("IdleClosePolicy", policy.id, policy.outputs, "idle");
    await c.advancing(c.plugin.client.delete("Instance", instance.id, instance.outputs));
    expect(await destroying.next()).toEqual({
      severity: engproto.LogSeverity.WARNING,
      message: expect.stringMatching(/^The idle policy of instance \S+ was already gone with its instance/),
      urn: urn("gpucloud:index:IdleClosePolicy", "idle"),
    });
    expect([...previewing.unread, ...upping.unread]).toEqual([]);
    expect(c.plugin.stderr).toBe("");
    expect(await c.instanceUuids()).toEqual([]);
  });

  it("sends warnings to an engine older than Handshake, which sends Attach alone", async () => {
    const older = await attachedEngine({ handshake: false });
    const client = c.plugin.client;
    const { inputs } = await client.check("Instance", { ...c.spec, title: "older" });
    const made = await c.advancing(client.create("Instance", inputs));
    const checked = await client.check("IdleClosePolicy", policyOf(made.id), "older-idle");
    const idle = await client.create("IdleClosePolicy", checked.inputs, { name: "older-idle" });
    await c.advancing(client.delete("Instance", made.id, made.outputs));
    await client.delete("IdleClosePolicy", idle.id, idle.outputs, "older-idle");
    expect(await older.next()).toMatchObject({ urn: urn("gpucloud:index:IdleClosePolicy", "older-idle") });
  });

  it("serves the next command afresh after one was cancelled (Ctrl-C)", async () => {
    await c.plugin.client.cancel();
    await expect(c.plugin.client.check("Instance", c.spec)).rejects.toMatchObject({ code: 1 });
    await attachedEngine();
    const { failures } = await c.plugin.client.check("Instance", { ...c.spec, title: "again" });
    expect(failures).toEqual([]);
  });
});
