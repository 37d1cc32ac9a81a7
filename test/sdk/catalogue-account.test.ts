import { AuthenticationError, collect, GpuCloudClient } from "pulumi-gpucloud/sdk";
import { startCloud, type Cloud } from "./harness";

let cloud: Cloud;
let client: GpuCloudClient;

beforeAll(async () => {
  cloud = await startCloud();
  client = cloud.client();
});
afterAll(() => cloud.close());

describe("catalogue", () => {
  it("lists the seeded GPU models with hourly prices", async () => {
    const { gpu_list, total } = await client.catalogue.gpus();
    expect(total).toBe(gpu_list.length);
    const valid = gpu_list.filter((g) => g.status === 1).map((g) => g.gpu_name);
    expect(valid).toEqual(expect.arrayContaining(["4080", "4090D", "5090"]));
    expect(gpu_list.some((g) => g.status === 0)).toBe(true);
    for (const gpu of gpu_list) expect(gpu.price.hour).toEqual(expect.any(Number));
  });

  it("walks every page of pods, and filters them by name", async () => {
    const all = await collect(client.catalogue.podsAll({}, { pageSize: 1 }));
    const { total } = await client.catalogue.pods({ page: 1, page_size: 1 });
    expect(all).toHaveLength(total);
    expect(total).toBeGreaterThanOrEqual(3);
    expect(new Set(all.map((p) => p.uuid)).size).toBe(total);
    const name = all[0].title.slice(0, 4);
    const filtered = await collect(client.catalogue.podsAll({ name }));
    expect(filtered.length).toBeGreaterThan(0);
    for (const pod of filtered) expect(pod.title.toLowerCase()).toContain(name.toLowerCase());
  });

  it("walks every page of market images and filters by CUDA and Python version", async () => {
    const all = await collect(client.catalogue.marketImagesAll({}, { pageSize: 2 }));
    const first = await client.catalogue.marketImages({ page: 1, page_size: 2 });
    expect(first.page).toBe(1);
    expect(all).toHaveLength(first.total);
    const cuda = all[0].components!.CUDA!;
    const byCuda = await collect(client.catalogue.marketImagesAll({ cuda_version: cuda }));
    expect(byCuda.length).toBeGreaterThan(0);
    expect(byCuda.length).toBeLessThanOrEqual(all.length);
    for (const image of byCuda) expect(image.components?.CUDA).toContain(cuda);
    const python = all[0].components!.Python!;
    for (const image of await collect(client.catalogue.marketImagesAll({ python_version: python }))) {
      expect(image.components?.Python).toContain(python);
    }
  });

  it("serves the public lists without a key, and refuses the GPU list without one", async () => {
    const anonymous = new GpuCloudClient({ baseUrl: cloud.url });
    try {
      expect((await anonymous.catalogue.pods()).total).toBeGreaterThan(0);
      expect((await anonymous.catalogue.marketImages()).total).toBeGreaterThan(0);
      await expect(anonymous.catalogue.gpus()).rejects.toBeInstanceOf(AuthenticationError);
    } finally {
      await anonymous.close();
    }
  });
});

describe("account", () => {
  it("reads the balance", async () => {
    const balance = await client.account.balance();
    expect(balance.balance).toEqual(expect.any(Number));
    expect(balance.card_balance).toEqual(expect.any(Number));
  });

  it("lists recharge records and walks them", async () => {
    const page = await client.account.recharges({ page: 1, page_size: 100 });
    const all = await collect(client.account.rechargesAll());
    expect(all).toHaveLength(page.total);
    if (all.length > 0) {
      const filtered = await client.account.recharges({ trade_number: all[0].trade_number });
      expect(filtered.recharge_list.map((r) => r.trade_number)).toContain(all[0].trade_number);
    }
  });

  it("lists bills and walks them", async () => {
    const page = await client.account.bills();
    const all = await collect(client.account.billsAll());
    expect(Array.isArray(page.bill_list)).toBe(true);
    expect(all.length).toBeGreaterThanOrEqual(page.bill_list.length);
  });
});
