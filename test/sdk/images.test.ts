import { collect, NotFoundError, type GpuCloudClient } from "pulumi-gpucloud/sdk";
import { answered, startCloud, type Cloud } from "./harness";

let cloud: Cloud;
let client: GpuCloudClient;
const fast = { pollIntervalMs: 5, maxPollIntervalMs: 10 };

beforeAll(async () => {
  cloud = await startCloud();
  client = cloud.client();
});
afterAll(() => cloud.close());
beforeEach(() => cloud.reset());

async function runningInstance(): Promise<string> {
  const gpu = (await client.catalogue.gpus()).gpu_list.find((g) => g.gpu_name === "4080")!;
  const pod = (await collect(client.catalogue.podsAll()))[0];
  const { instance_uuid } = await client.instances.createByPod({
    pod_uuid: pod.uuid,
    gpu_uuid: gpu.gpu_uuid,
    gpu_nums: 1,
  });
  await cloud.advance(60);
  await client.instances.waitForStatus(instance_uuid, [2], fast);
  return instance_uuid;
}

describe("personal images", () => {
  it("saves an instance as an image, waits for it, lists it and deletes it", async () => {
    const instance_uuid = await runningInstance();
    const before = (await client.images.list()).image_list.length;
    const saving = client.images.saveFromInstance(instance_uuid, fast);
    await answered(cloud, "/instance/save_image");
    expect((await client.instances.info(instance_uuid)).save_image_status).toBe(1);
    await cloud.advance(120);
    const image = await saving;
    expect(image.save_image_status).toBe(2);
    const { image_list, total } = await client.images.list();
    expect(total).toBe(before + 1);
    expect(image_list.map((i) => i.uuid)).toContain(image.uuid);
    expect(await client.images.waitForSaved({ image_uuid: image.uuid }, fast)).toMatchObject({
      uuid: image.uuid,
    });
    await client.images.delete(image.uuid);
    expect((await client.images.list()).image_list.map((i) => i.uuid)).not.toContain(image.uuid);
    await expect(client.images.delete(image.uuid)).resolves.toBeUndefined();
  });

  it("creates an instance from a saved personal image", async () => {
    const instance_uuid = await runningInstance();
    const saving = client.images.saveFromInstance(instance_uuid, fast);
    await answered(cloud, "/instance/save_image");
    await cloud.advance(120);
    const image = await saving;
    const gpu = (await client.catalogue.gpus()).gpu_list.find((g) => g.gpu_name === "5090")!;
    const created = await client.instances.createByImage({
      image_uuid: image.uuid,
      gpu_uuid: gpu.gpu_uuid,
      gpu_nums: 1,
    });
    expect(created.instance_uuid).not.toBe(instance_uuid);
  });

  it("waiting for an image that is not listed is NotFoundError", async () => {
    await expect(client.images.waitForSaved({ image_uuid: "no-such-image" }, fast)).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });
});
