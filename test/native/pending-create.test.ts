/**
 * A create whose outcome stayed unknown leaves a pending record in state (id `pending-create:...`), and
 * `pulumi refresh` through the native plugin resolves it: Read answers the uuid of the instance the lost
 * create made (the engine then stores that id), or "" when none was made. The record is written here as
 * a failed create leaves it; the create path that leaves it is tested through the dynamic provider
 * (test/provider/instance-create.test.ts), which runs the same resource definition.
 */
import { startNativeCloud, type NativeCloud } from "./cloud";
import type { Props } from "./plugin";

jest.setTimeout(120_000);

describe("a pending create refreshed through the native plugin", () => {
  let c: NativeCloud;
  beforeAll(async () => {
    c = await startNativeCloud();
    // 1 s requests: the claim of an instance waits two of them for a rival claimer's write.
    const { inputs } = await c.plugin.client.checkConfig({ ...c.config, requestTimeoutMs: "1000" });
    await c.plugin.client.configure(inputs);
  });
  afterAll(async () => {
    await c?.stop();
  });

  /** What the state holds after a create of `title` lost its answer in the window [start, end]. */
  async function pendingRecord(
    title: string,
    start: number,
    end: number,
  ): Promise<{ id: string; outputs: Props }> {
    const { inputs } = await c.plugin.client.check("Instance", { ...c.spec, title });
    const pendingCreate = {
      spec: { podUuid: c.podUuid, gpuUuid: c.gpu4090, gpuNums: 1 },
      windowStart: start,
      windowEnd: end,
      reason: "the answer to the create call was lost",
      candidates: [],
    };
    return { id: `pending-create:${start + 1}:0a1b2c3d`, outputs: { ...inputs, pendingCreate } };
  }

  const cloudSeconds = () => Math.floor(c.emu.running.now());

  it("answers the uuid of the instance the lost create made, titled as declared", async () => {
    const start = cloudSeconds();
    const made = await c.api.instances.createByPod({ pod_uuid: c.podUuid, gpu_uuid: c.gpu4090, gpu_nums: 1 });
    const record = await pendingRecord("found-again", start - 1, start + 1);
    const read = await c.advancing(c.plugin.client.read("Instance", record.id, record.outputs, {}));
    expect(read.id).toBe(made.instance_uuid);
    expect(read.outputs).toMatchObject({
      instanceUuid: made.instance_uuid,
      title: "found-again",
      pendingCreate: null,
    });
    expect((await c.api.instances.info(made.instance_uuid)).title).toBe("found-again");
  });

  it("answers no id when nothing was made in the window, so the next up creates it", async () => {
    const start = cloudSeconds();
    const before = await c.instanceUuids();
    const record = await pendingRecord("never-made", start - 1, start + 1);
    const read = await c.advancing(c.plugin.client.read("Instance", record.id, record.outputs, {}));
    expect(read.id).toBe("");
    expect(await c.instanceUuids()).toEqual(before);
  });
});
