import {
  BusinessError,
  collect,
  InputValidationError,
  NotFoundError,
  TimeoutError,
  type GpuCloudClient,
  type Instance,
} from "pulumi-gpucloud/sdk";
import { countCalls, startCloud, tick, OTHER_KEY, USER, type Cloud } from "./harness";

let cloud: Cloud;
let client: GpuCloudClient;
let podUuid: string;
let gpuUuid: string;

const fast = { pollIntervalMs: 5, maxPollIntervalMs: 10 };

beforeAll(async () => {
  cloud = await startCloud();
  client = cloud.client();
});
afterAll(() => cloud.close());
beforeEach(async () => {
  await cloud.reset();
  const gpus = await client.catalogue.gpus();
  gpuUuid = gpus.gpu_list.find((g) => g.gpu_name === "4090D" && g.status === 1)!.gpu_uuid;
  podUuid = (await collect(client.catalogue.podsAll()))[0].uuid;
});

async function createRunning(): Promise<Instance> {
  const created = await client.instances.createByPod({ pod_uuid: podUuid, gpu_uuid: gpuUuid, gpu_nums: 1 });
  await cloud.advance(60);
  return client.instances.waitForStatus(created.instance_uuid, [2], fast);
}

describe("instances", () => {
  it("creates from a pod and reaches running once 60 simulated seconds pass", async () => {
    const created = await client.instances.createByPod({ pod_uuid: podUuid, gpu_uuid: gpuUuid, gpu_nums: 2 });
    expect(created.instance_uuid).toEqual(expect.any(String));
    expect([0, 1]).toContain(created.status);
    expect(created.gpu_nums).toBe(2);
    const running = client.instances.waitForStatus(created.instance_uuid, [2], fast);
    await tick();
    await cloud.advance(60);
    const info = await running;
    expect(info.status).toBe(2);
    expect(info.server_url).toEqual(expect.any(Array));
    expect(info.server_map).toEqual(expect.any(Array));
  });

  it("creates from a market image", async () => {
    const image = (await client.catalogue.marketImages({ page: 1, page_size: 1 })).image_list[0];
    const created = await client.instances.createByImage({
      image_uuid: image.uuid,
      gpu_uuid: gpuUuid,
      gpu_nums: 1,
    });
    expect((await client.instances.info(created.instance_uuid)).instance_uuid).toBe(created.instance_uuid);
  });

  it("refuses gpu_nums=3 before sending anything", async () => {
    await cloud.clearRequests();
    const err = await client.instances
      .createByPod({ pod_uuid: podUuid, gpu_uuid: gpuUuid, gpu_nums: 3 })
      .catch((e) => e);
    expect(err).toBeInstanceOf(InputValidationError);
    expect(err.issues).toEqual([{ field: "gpu_nums", reason: "must be one of 1, 2, 4, 8, got 3" }]);
    expect(countCalls(await cloud.requests(), "/instance/create_by_pod")).toBe(0);
  });

  it("surfaces the API's refusal of an invalid GPU model as a BusinessError", async () => {
    const invalid = (await client.catalogue.gpus()).gpu_list.find((g) => g.status === 0)!;
    const err = await client.instances
      .createByPod({ pod_uuid: podUuid, gpu_uuid: invalid.gpu_uuid, gpu_nums: 1 })
      .catch((e) => e);
    expect(err).toBeInstanceOf(BusinessError);
    expect(err.message).toMatch(
      /^Could not create instance from pod .*: the API refused it: .*\(HTTP 200, code 1\)\. /,
    );
  });

  it("refuses a create when the balance is insufficient", async () => {
    await cloud.setBalance(USER, 0);
    const err = await client.instances
      .createByPod({ pod_uuid: podUuid, gpu_uuid: gpuUuid, gpu_nums: 8 })
      .catch((e) => e);
    expect(err).toBeInstanceOf(BusinessError);
    expect(err.apiMessage).toMatch(/insufficient balance/);
  });

  it("lists instances and walks every page", async () => {
    for (let i = 0; i < 3; i++)
      await client.instances.createByPod({ pod_uuid: podUuid, gpu_uuid: gpuUuid, gpu_nums: 1 });
    const page = await client.instances.list({ page: 1, page_size: 2 });
    expect(page.total).toBe(3);
    expect(page.instance_list).toHaveLength(2);
    cloud.events.length = 0;
    const all = await collect(client.instances.listAll({ pageSize: 2 }));
    expect(new Set(all.map((i) => i.instance_uuid)).size).toBe(3);
    expect(cloud.events.map((e) => e.path)).toEqual([
      "/instance/list?page=1&page_size=2",
      "/instance/list?page=2&page_size=2",
    ]);
  });

  it("reads a missing instance, or another user's, as NotFoundError", async () => {
    await expect(client.instances.info("no-such-instance")).rejects.toBeInstanceOf(NotFoundError);
    const mine = await client.instances.createByPod({ pod_uuid: podUuid, gpu_uuid: gpuUuid, gpu_nums: 1 });
    const other = cloud.client({ apiKey: OTHER_KEY });
    await expect(other.instances.info(mine.instance_uuid)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("renames an instance, and refuses a title of 51 characters before sending", async () => {
    const { instance_uuid } = await client.instances.createByPod({
      pod_uuid: podUuid,
      gpu_uuid: gpuUuid,
      gpu_nums: 1,
    });
    await client.instances.updateTitle(instance_uuid, "trainer-01");
    expect((await client.instances.info(instance_uuid)).title).toBe("trainer-01");
    await client.instances.updateTitle(instance_uuid, "x".repeat(50));
    await expect(client.instances.updateTitle(instance_uuid, "x".repeat(51))).rejects.toBeInstanceOf(
      InputValidationError,
    );
    await expect(client.instances.updateTitle("no-such-instance", "t")).rejects.toBeInstanceOf(NotFoundError);
  });

  it("sets and cancels an idle-close rule", async () => {
    const { instance_uuid } = await createRunning();
    await client.instances.setIdleClose({
      instance_uuid,
      idle_period_minutes: 30,
      idle_gpu_threshold: 100,
      idle_fb_threshold: 100,
    });
    const info = await client.instances.info(instance_uuid);
    expect(info.idle_close).toMatchObject({
      idle_period_minutes: 30,
      destroy: false,
      idle_gpu_threshold: 100,
      idle_fb_threshold: 100,
    });
    await client.instances.setIdleClose({ instance_uuid, idle_period_minutes: 0 });
    await expect(
      client.instances.setIdleClose({ instance_uuid, idle_period_minutes: 15 }),
    ).rejects.toMatchObject({
      name: "InputValidationError",
      issues: [{ field: "idle_period_minutes", reason: "must be one of 0, 10, 30, 60, 120, got 15" }],
    });
    await expect(
      client.instances.setIdleClose({ instance_uuid: "no-such-instance", idle_period_minutes: 10 }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it("shuts down, starts up and restarts through the documented statuses", async () => {
    const { instance_uuid } = await createRunning();
    await client.instances.shutdown(instance_uuid);
    expect([21, 22]).toContain((await client.instances.info(instance_uuid)).status);
    await cloud.advance(10);
    await client.instances.waitForStatus(instance_uuid, [22], fast);
    await expect(client.instances.shutdown(instance_uuid)).rejects.toBeInstanceOf(BusinessError);
    await client.instances.startup(instance_uuid);
    expect([1, 24]).toContain((await client.instances.info(instance_uuid)).status);
    await cloud.advance(30);
    await client.instances.waitForStatus(instance_uuid, [2], fast);
    await client.instances.restart(instance_uuid);
    expect((await client.instances.info(instance_uuid)).status).toBe(27);
    await cloud.advance(20);
    expect((await client.instances.waitForStatus(instance_uuid, [2], fast)).status).toBe(2);
  });

  it("starts a stopped instance on another GPU model", async () => {
    const { instance_uuid } = await createRunning();
    await client.instances.shutdown(instance_uuid);
    await cloud.advance(10);
    const gpu5090 = (await client.catalogue.gpus()).gpu_list.find((g) => g.gpu_name === "5090")!;
    await client.instances.startup(instance_uuid, { gpu_uuid: gpu5090.gpu_uuid, gpu_nums: 2 });
    await cloud.advance(30);
    const info = await client.instances.waitForStatus(instance_uuid, [2], fast);
    expect(info).toMatchObject({ gpu_uuid: gpu5090.gpu_uuid, gpu_nums: 2 });
  });

  it("cancels a request in flight when its signal aborts", async () => {
    await cloud.fault("/instance/list", "delay", 1, { ms: 500 });
    const controller = new AbortController();
    const listing = client.instances.list({}, { signal: controller.signal });
    await tick();
    controller.abort();
    await expect(listing).rejects.toMatchObject({ name: "AbortError" });
  });

  it("schedules and cancels a shutdown", async () => {
    const { instance_uuid } = await createRunning();
    const { now } = (await (await fetch(`${cloud.url}/_emulator/clock`)).json()) as { now: number };
    await client.instances.shutdownTimer(instance_uuid, { enable: true, shutdown_time: now + 600 });
    expect((await client.instances.info(instance_uuid)).shutdown_regular).toEqual({
      enable: true,
      shutdown_time: now + 600,
    });
    await client.instances.shutdownTimer(instance_uuid, { enable: false, shutdown_time: 0 });
    expect((await client.instances.info(instance_uuid)).shutdown_regular?.enable).toBe(false);
  });

  it("destroys an instance, and destroying it again counts as done", async () => {
    const { instance_uuid } = await createRunning();
    await client.instances.destroy(instance_uuid);
    await expect(client.instances.info(instance_uuid)).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.instances.destroy(instance_uuid)).resolves.toBeUndefined();
  });

  it("times out a wait with the last status seen", async () => {
    const { instance_uuid } = await client.instances.createByPod({
      pod_uuid: podUuid,
      gpu_uuid: gpuUuid,
      gpu_nums: 1,
    });
    const err = await client.instances
      .waitForStatus(instance_uuid, [2], { ...fast, timeoutMs: 40 })
      .catch((e) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.message).toMatch(
      /waiting for instance .* to reach status 2 \(running\); last seen: status [01] \(/,
    );
    expect(err.lastSeen).toMatch(/^status [01]/);
  });

  it("stops waiting when the signal aborts", async () => {
    const { instance_uuid } = await client.instances.createByPod({
      pod_uuid: podUuid,
      gpu_uuid: gpuUuid,
      gpu_nums: 1,
    });
    const controller = new AbortController();
    const waiting = client.instances.waitForStatus(instance_uuid, [2], {
      ...fast,
      signal: controller.signal,
    });
    await tick();
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: "AbortError" });
  });
});
