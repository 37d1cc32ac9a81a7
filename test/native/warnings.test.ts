/**
 * Warnings of the plugin's operations reach the engine's log, beside the resource they concern, when the
 * plugin was given the engine's address and it answers; otherwise the plugin's stderr, which the engine
 * also shows. The engine here is a stand-in that serves only Pulumi's Engine.Log (the Pulumi CLI cannot
 * run on these machines).
 */
import * as engproto from "@pulumi/pulumi/proto/engine_pb";
import { startNativeCloud, type NativeCloud } from "./cloud";
import { fakeEngine } from "./fake-engine";
import { urn, type Props } from "./plugin";

/** An instance and its idle policy, then the instance deleted: what is left is a policy whose instance is gone. */
async function policyOfGoneInstance(c: NativeCloud): Promise<{ id: string; outputs: Props }> {
  const client = c.plugin.client;
  await client.configure((await client.checkConfig(c.config)).inputs);
  const inputs = (await client.check("Instance", c.spec)).inputs;
  const instance = await c.advancing(client.create("Instance", inputs));
  const policyInputs = (
    await client.check("IdleClosePolicy", { instanceUuid: instance.id, idlePeriodMinutes: 10 })
  ).inputs;
  const policy = await client.create("IdleClosePolicy", policyInputs, { name: "idle" });
  await c.advancing(client.delete("Instance", instance.id, instance.outputs));
  return policy;
}

const GONE_WARNING =
  /^The idle policy of instance \S+ was already gone with its instance; nothing to cancel\.$/;

describe("warnings of the native plugin", () => {
  it("go to the engine's log with the resource's URN when the engine answers", async () => {
    const engine = await fakeEngine();
    const c = await startNativeCloud({ engineAddress: engine.address });
    try {
      const policy = await policyOfGoneInstance(c);
      await c.plugin.client.delete("IdleClosePolicy", policy.id, policy.outputs, "idle");
      expect(await engine.next()).toEqual({
        severity: engproto.LogSeverity.WARNING,
        message: expect.stringMatching(GONE_WARNING),
        urn: urn("gpucloud:index:IdleClosePolicy", "idle"),
      });
      expect(c.plugin.stderr).toBe("");
    } finally {
      await c.stop();
      engine.close();
    }
  });

  it("go to stderr when the engine's address leads nowhere", async () => {
    const c = await startNativeCloud({ engineAddress: "127.0.0.1:1" });
    try {
      const policy = await policyOfGoneInstance(c);
      await c.plugin.client.delete("IdleClosePolicy", policy.id, policy.outputs, "idle");
      const stderr = await c.plugin.stderrContaining("\n");
      expect(stderr.trim()).toMatch(new RegExp(`^warning: ${GONE_WARNING.source.slice(1)}`));
    } finally {
      await c.stop();
    }
  });
});
