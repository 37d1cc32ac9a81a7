import { GpuCloudClient } from "pulumi-gpucloud/sdk";
import {
  getBalance,
  getBalanceOutput,
  getGpu,
  getInstances,
  getInstancesOutput,
  getPod,
} from "../../provider/datasources";
import {
  admin,
  advance,
  API_KEY,
  connectionFor,
  OTHER_KEY,
  requests,
  useDataSourceCloud,
  USER,
} from "../support/data-source-cloud";
import { resolveOutput } from "./outputs";

const emu = useDataSourceCloud();
let client: GpuCloudClient;

beforeAll(() => {
  client = new GpuCloudClient({ baseUrl: emu.url, apiKey: API_KEY });
});
afterAll(() => client.close());

async function createInstances(count: number): Promise<string[]> {
  const opts = connectionFor(emu);
  const pod = await getPod({ title: "JupyterLab PyTorch" }, opts);
  const gpu = await getGpu({ name: "4080" }, opts);
  const uuids: string[] = [];
  for (let i = 0; i < count; i++) {
    const created = await client.instances.createByPod({
      pod_uuid: pod.podUuid,
      gpu_uuid: gpu.gpuUuid,
      gpu_nums: 1,
    });
    await client.instances.updateTitle(created.instance_uuid, `worker-${i}`);
    uuids.push(created.instance_uuid);
  }
  return uuids;
}

describe("getInstances", () => {
  it("is empty for a new account", async () => {
    expect(await getInstances(connectionFor(emu))).toEqual({ instances: [] });
  });

  it("walks every page and maps each instance to camelCase fields", async () => {
    const uuids = await createInstances(5);
    await advance(emu, 60);
    await admin(emu, "DELETE", "/requests");

    const { instances } = await getInstances({ ...connectionFor(emu), pageSize: 2 });

    expect(await requests(emu, "/instance/list")).toHaveLength(3);
    expect(instances.map((i) => i.instanceUuid).sort()).toEqual([...uuids].sort());
    const first = instances.find((i) => i.title === "worker-0");
    expect(first).toMatchObject({
      status: 2,
      statusName: "running",
      gpuName: "4080",
      gpuNums: 1,
      serverUrls: expect.any(Array),
    });
    expect(first?.createTime).toEqual(expect.any(Number));
  });

  it("leaves SSH passwords out, keeping host, port and username", async () => {
    const [uuid] = await createInstances(1);
    await advance(emu, 60);
    const detail = await client.instances.info(uuid);
    const passwords = (detail.server_map ?? []).flatMap((s) => (s.ssh_info ? [s.ssh_info.password] : []));
    expect(passwords.length).toBeGreaterThan(0);

    const { instances } = await getInstances(connectionFor(emu));
    const ssh = instances[0].services.find((s) => s.portType === "ssh");
    expect(ssh?.ssh).toEqual({
      host: expect.any(String),
      port: expect.any(Number),
      username: expect.any(String),
    });
    const dumped = JSON.stringify(instances);
    for (const password of passwords) {
      expect(dumped).not.toContain(password);
    }
  });

  it("shows only the caller's instances", async () => {
    await createInstances(2);
    expect((await getInstances(connectionFor(emu, OTHER_KEY))).instances).toEqual([]);
  });

  it("has an Output form", async () => {
    await createInstances(1);
    const { instances } = await resolveOutput(getInstancesOutput(connectionFor(emu)));
    expect(instances.map((i) => i.title)).toEqual(["worker-0"]);
  });
});

describe("getBalance", () => {
  it("reads the balance in CNY, afresh on every call", async () => {
    const opts = connectionFor(emu);
    const before = await getBalance(opts);
    expect(before).toEqual({ balance: expect.any(Number), cardBalance: expect.any(Number), currency: "CNY" });
    await admin(emu, "PUT", `/users/${USER}/balance`, { balance: 42.5 });
    expect((await getBalance(opts)).balance).toBe(42.5);
  });

  it("has an Output form", async () => {
    const balance = await resolveOutput(getBalanceOutput(connectionFor(emu)));
    expect(balance.currency).toBe("CNY");
  });
});
