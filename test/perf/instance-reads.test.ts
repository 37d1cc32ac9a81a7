import {
  AuthenticationError,
  GpuCloudClient,
  NotFoundError,
  ServerError,
  TimeoutError,
  type Instance,
} from "pulumi-gpucloud/sdk";
import { InstanceReads, READ_SHARING_GAP_MS } from "../../provider/resources/instance/reads";
import { advancing } from "../support/clock";
import {
  callsByEndpoint,
  DEMO_KEY,
  gpuUuid,
  pod,
  startTestEmulator,
  type TestEmulator,
} from "../emulator/helpers";

describe("coalesced instance reads against the emulator", () => {
  let t: TestEmulator;
  let api: GpuCloudClient;
  let spec: { pod_uuid: string; gpu_uuid: string; gpu_nums: number };

  beforeAll(async () => {
    t = await startTestEmulator({ balance: 1_000_000 });
    spec = { pod_uuid: (await pod(t, "ComfyUI")).uuid, gpu_uuid: await gpuUuid(t, "4090D"), gpu_nums: 1 };
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.admin("POST", "/reset");
    api = new GpuCloudClient({ baseUrl: t.url, apiKey: DEMO_KEY, maxRetries: 0 });
  });
  afterEach(() => api.close());

  async function create(count: number, by: GpuCloudClient = api): Promise<string[]> {
    const uuids: string[] = [];
    for (let i = 0; i < count; i++) uuids.push((await by.instances.createByPod(spec)).instance_uuid);
    await t.admin("DELETE", "/requests");
    return uuids;
  }

  const calls = () => callsByEndpoint(t);

  it("answers 150 reads arriving together with one walk of two pages and no info call", async () => {
    const uuids = await create(150);
    const reads = new InstanceReads(api);
    const read = await Promise.all(uuids.map((u) => reads.info(u)));
    expect(read.map((i) => i.instance_uuid)).toEqual(uuids);
    expect(read[0].server_map).toBeDefined();
    expect(await calls()).toEqual({ "GET /instance/list": 2 });
  });

  it("reports an instance destroyed before the read as gone from a one-page walk, without info", async () => {
    const [kept, gone] = await create(2);
    await api.instances.destroy(gone);
    await t.admin("DELETE", "/requests");
    const reads = new InstanceReads(api);
    const [keptRead, goneRead] = await Promise.allSettled([reads.info(kept), reads.info(gone)]);
    expect(keptRead).toMatchObject({ status: "fulfilled", value: { instance_uuid: kept } });
    expect(goneRead).toMatchObject({ status: "rejected", reason: expect.any(NotFoundError) });
    expect(await calls()).toEqual({ "GET /instance/list": 1 });
  });

  it("asks info about an instance missing from a walk of several pages, whose pages may have shifted", async () => {
    const uuids = await create(102);
    await api.instances.destroy(uuids[0]);
    await t.admin("DELETE", "/requests");
    await expect(new InstanceReads(api).info(uuids[0])).rejects.toBeInstanceOf(NotFoundError);
    expect(await calls()).toEqual({ "GET /instance/list": 2, "GET /instance/info": 1 });
  });

  it("answers a read asked while a walk is in flight from the next walk, so it sees a later destroy", async () => {
    const [uuid] = await create(1);
    await t.admin("POST", "/faults", { path: "/instance/list", kind: "delay", ms: 150, count: 1 });
    const reads = new InstanceReads(api);
    const first = reads.info(uuid);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await api.instances.destroy(uuid);
    const second = reads.info(uuid);
    await first.catch(() => undefined);
    await expect(second).rejects.toBeInstanceOf(NotFoundError);
    expect((await calls())["GET /instance/list"]).toBe(2);
  });

  it("fails every read that shared a failed walk, and the next walk starts afresh", async () => {
    const uuids = await create(3);
    await t.admin("POST", "/faults", { path: "/instance/list", kind: "http_500", count: 1 });
    const reads = new InstanceReads(api);
    const results = await Promise.allSettled(uuids.map((u) => reads.info(u)));
    expect(results.map((r) => r.status === "rejected" && r.reason instanceof ServerError)).toEqual([
      true,
      true,
      true,
    ]);
    await expect(reads.info(uuids[0])).resolves.toMatchObject({ instance_uuid: uuids[0] });
  });

  it("lets 20 instances waiting for running share one walk per poll interval, with no info call", async () => {
    const uuids = await create(20);
    const reads = new InstanceReads(api);
    const started = Date.now();
    const running = await advancing(
      t,
      Promise.all(uuids.map((u) => reads.waitForStatus(u, [2], { timeoutMs: 20_000, pollIntervalMs: 20 }))),
    );
    const elapsed = Date.now() - started;
    expect(running.map((i) => i.status)).toEqual(uuids.map(() => 2));
    const counted = await calls();
    expect(counted["GET /instance/info"]).toBeUndefined();
    expect(counted["GET /instance/list"]).toBeLessThanOrEqual(Math.ceil(elapsed / 20) + 1);
  });

  it("rides out a poll walk that failed with HTTP 500: every wait still ends running", async () => {
    const uuids = await create(3);
    await t.admin("POST", "/faults", { path: "/instance/list", kind: "http_500", count: 1 });
    const reads = new InstanceReads(api);
    const options = { timeoutMs: 20_000, pollIntervalMs: 10 };
    const running = await advancing(t, Promise.all(uuids.map((u) => reads.waitForStatus(u, [2], options))));
    expect(running.map((i) => i.status)).toEqual([2, 2, 2]);
  });

  it("fails every wait that shared a walk refused for good (a disabled key) with that error", async () => {
    const uuids = await create(3);
    await t.admin("POST", `/keys/${DEMO_KEY}/disable`);
    const reads = new InstanceReads(api);
    const options = { timeoutMs: 20_000, pollIntervalMs: 10 };
    const results = await Promise.allSettled(uuids.map((u) => reads.waitForStatus(u, [2], options)));
    expect(results.map((r) => r.status === "rejected" && r.reason instanceof AuthenticationError)).toEqual([
      true,
      true,
      true,
    ]);
  });

  it("times out a wait whose polls keep failing, naming the last status and the failure", async () => {
    const [uuid] = await create(1);
    const reads = new InstanceReads(api);
    await expect(reads.info(uuid)).resolves.toMatchObject({ status: 1 });
    await t.admin("POST", "/faults", { path: "/instance/list", kind: "http_503", count: 1000 });
    const waiting = reads.waitForStatus(uuid, [2], { timeoutMs: 80, pollIntervalMs: 10 });
    await expect(waiting).rejects.toBeInstanceOf(TimeoutError);
    await expect(waiting).rejects.toMatchObject({ lastSeen: expect.stringContaining("a poll failed") });
  });

  it("fails a wait for running with NotFoundError when the instance is destroyed meanwhile", async () => {
    const [uuid] = await create(1);
    const reads = new InstanceReads(api);
    const waiting = reads.waitForStatus(uuid, [2], { timeoutMs: 20_000, pollIntervalMs: 10 });
    await api.instances.destroy(uuid);
    await expect(waiting).rejects.toBeInstanceOf(NotFoundError);
  });

  it("times out a wait, naming the status last seen", async () => {
    const [uuid] = await create(1);
    const waiting = new InstanceReads(api).waitForStatus(uuid, [2], { timeoutMs: 60, pollIntervalMs: 10 });
    await expect(waiting).rejects.toBeInstanceOf(TimeoutError);
    await expect(waiting).rejects.toMatchObject({ lastSeen: "status 1 (initializing)" });
  });

  it("ends a wait until gone once a walk no longer lists the instance", async () => {
    const [kept, gone] = await create(2);
    const reads = new InstanceReads(api);
    const waiting = reads.waitUntilGone(gone, { timeoutMs: 5_000, pollIntervalMs: 10 });
    await api.instances.destroy(gone);
    await expect(waiting).resolves.toBeUndefined();
    await expect(reads.info(kept)).resolves.toMatchObject({ instance_uuid: kept });
  });

  describe("a refresh's reads (InstanceReads.read), riding the latest walk that reads rode", () => {
    /** Another client of the same account: what it changes, this process did not write. */
    let other: GpuCloudClient;
    /** The reads' clock: it moves only when a test moves it. */
    let clock: number;
    let reads: InstanceReads;

    beforeEach(() => {
      other = new GpuCloudClient({ baseUrl: t.url, apiKey: DEMO_KEY, maxRetries: 0 });
      clock = 0;
      reads = new InstanceReads(api, () => clock);
    });
    afterEach(() => other.close());

    const createElsewhere = (count: number) => create(count, other);
    const listCalls = async () => (await callsByEndpoint(t))["GET /instance/list"] ?? 0;

    it("answers 150 instances and their policies read one after another, however slowly, with one walk", async () => {
      const uuids = await createElsewhere(150);
      for (const uuid of uuids) {
        await expect(reads.read(uuid, "Instance")).resolves.toMatchObject({ instance_uuid: uuid });
        clock += READ_SHARING_GAP_MS;
        await expect(reads.read(uuid, "IdleClosePolicy")).resolves.toMatchObject({ instance_uuid: uuid });
        clock += READ_SHARING_GAP_MS;
      }
      expect(await callsByEndpoint(t)).toEqual({ "GET /instance/list": 2 });
    });

    it("starts a new walk for a read that comes more than READ_SHARING_GAP_MS after a read last rode the walk", async () => {
      const [first, second] = await createElsewhere(2);
      await reads.read(first, "Instance");
      clock += READ_SHARING_GAP_MS;
      await reads.read(second, "Instance");
      expect(await listCalls()).toBe(1);
      clock += READ_SHARING_GAP_MS + 1;
      await other.instances.updateTitle(second, "renamed elsewhere");
      await expect(reads.read(second, "IdleClosePolicy")).resolves.toMatchObject({
        title: "renamed elsewhere",
      });
      expect(await listCalls()).toBe(2);
    });

    it("answers a read after this process's own write from a walk that started after the write's answer", async () => {
      const [written, untouched] = await createElsewhere(2);
      await reads.read(written, "Instance");
      await api.instances.updateTitle(written, "renamed here");
      await expect(reads.read(written, "IdleClosePolicy")).resolves.toMatchObject({ title: "renamed here" });
      // Any write of this process: the walk does not know which instances a write changed.
      await api.instances.updateTitle(written, "renamed again");
      await reads.read(untouched, "Instance");
      expect(await listCalls()).toBe(3);
    });

    it("starts a new walk for a resource read again, so a second refresh sees what another client changed", async () => {
      const [changed, destroyed] = await createElsewhere(2);
      await reads.read(changed, "Instance");
      await reads.read(destroyed, "Instance");
      await other.instances.updateTitle(changed, "drifted");
      await other.instances.destroy(destroyed);
      await expect(reads.read(changed, "Instance")).resolves.toMatchObject({ title: "drifted" });
      await expect(reads.read(destroyed, "Instance")).rejects.toBeInstanceOf(NotFoundError);
      // The policy of the changed instance was not read since that walk: it shares it.
      await expect(reads.read(changed, "IdleClosePolicy")).resolves.toMatchObject({ title: "drifted" });
      expect(await listCalls()).toBe(2);
    });

    it("never shares the walks of waits and strict reads, so the first read after them starts its own", async () => {
      const [waited, destroyedElsewhere] = await createElsewhere(2);
      await advancing(t, reads.waitForStatus(waited, [2], { timeoutMs: 20_000, pollIntervalMs: 10 }));
      await reads.info(waited);
      await other.instances.destroy(destroyedElsewhere);
      const from = await listCalls();
      await expect(reads.read(destroyedElsewhere, "Instance")).rejects.toBeInstanceOf(NotFoundError);
      expect((await listCalls()) - from).toBe(1);
    });

    it("reads an instance missing from a shared walk with info: one made elsewhere since is not taken for gone", async () => {
      const [listed] = await createElsewhere(1);
      await reads.read(listed, "Instance");
      const [madeSince, destroyedSince] = await createElsewhere(2);
      await other.instances.destroy(destroyedSince);
      await t.admin("DELETE", "/requests");
      await expect(reads.read(madeSince, "Instance")).resolves.toMatchObject({ instance_uuid: madeSince });
      await expect(reads.read(destroyedSince, "Instance")).rejects.toBeInstanceOf(NotFoundError);
      expect(await callsByEndpoint(t)).toEqual({ "GET /instance/info": 2 });
    });

    it("does not share a walk that failed: the next read starts its own", async () => {
      const [uuid] = await createElsewhere(1);
      await t.admin("POST", "/faults", { path: "/instance/list", kind: "http_500", count: 1 });
      await expect(reads.read(uuid, "Instance")).rejects.toBeInstanceOf(ServerError);
      await expect(reads.read(uuid, "IdleClosePolicy")).resolves.toMatchObject({ instance_uuid: uuid });
      expect(await listCalls()).toBe(2);
    });
  });
});

describe("coalesced instance reads, with records the list answers without info's fields", () => {
  it("reads a listed record that lacks server_url and server_map with info", async () => {
    const listed: Instance = { instance_uuid: "ins-1", status: 2 };
    const full: Instance = { ...listed, server_url: ["https://x"], server_map: [] };
    const info = jest.fn(async () => full);
    const fake = {
      instances: { list: async () => ({ instance_list: [listed], total: 1 }), info },
      cloudNow: () => undefined,
    } as unknown as GpuCloudClient;
    await expect(new InstanceReads(fake).info("ins-1")).resolves.toEqual(full);
    expect(info).toHaveBeenCalledWith("ins-1");
  });
});
