import { startTestEmulator, type TestEmulator, HTTP_ERROR_STATUS } from "./helpers";

describe("emulator catalogue", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator(HTTP_ERROR_STATUS);
  });
  afterAll(() => t.close());

  describe("GET /gpu/list", () => {
    it("lists 4080, 4090D and 5090 as valid with hourly prices, and an invalid model", async () => {
      const { gpu_list, total } = (await t.api("GET", "/gpu/list")).body.data;
      expect(total).toBe(gpu_list.length);
      for (const name of ["4080", "4090D", "5090"]) {
        const gpu = gpu_list.find((g: { gpu_name: string }) => g.gpu_name === name);
        expect(gpu).toMatchObject({ status: 1, price: { hour: expect.any(Number) } });
        expect(typeof gpu.gpu_uuid).toBe("string");
      }
      expect(gpu_list.some((g: { status: number }) => g.status === 0)).toBe(true);
    });
  });

  describe("GET /pod/list", () => {
    it("lists at least three pods with tags and prices, 20 per page by default", async () => {
      const { pod_list, total } = (await t.api("GET", "/pod/list", { key: null })).body.data;
      expect(total).toBeGreaterThanOrEqual(3);
      expect(pod_list).toHaveLength(Math.min(total, 20));
      for (const pod of pod_list) {
        expect(pod).toEqual({
          title: expect.any(String),
          uuid: expect.any(String),
          remark: expect.any(String),
          pod_tag: expect.any(Array),
          price: expect.objectContaining({ hour: expect.any(Number) }),
        });
        expect(pod.pod_tag.length).toBeGreaterThanOrEqual(2);
      }
    });

    it("pages from 1 with page_size and keeps the total", async () => {
      const all = (await t.api("GET", "/pod/list", { key: null })).body.data;
      const first = (await t.api("GET", "/pod/list", { key: null, query: { page: 1, page_size: 2 } })).body
        .data;
      const second = (await t.api("GET", "/pod/list", { key: null, query: { page: 2, page_size: 2 } })).body
        .data;
      expect(first.total).toBe(all.total);
      expect([...first.pod_list, ...second.pod_list]).toEqual(all.pod_list.slice(0, 4));
      const beyond = (await t.api("GET", "/pod/list", { key: null, query: { page: 99, page_size: 2 } })).body
        .data;
      expect(beyond).toEqual({ pod_list: [], total: all.total });
    });

    it("matches name fuzzily and case-insensitively", async () => {
      const { pod_list, total } = (await t.api("GET", "/pod/list", { key: null, query: { name: "comfy" } }))
        .body.data;
      expect(total).toBe(1);
      expect(pod_list[0].title).toBe("ComfyUI");
    });

    it.each([
      ["page", "0"],
      ["page", "abc"],
      ["page_size", "101"],
      ["page_size", "0"],
    ])("refuses %s=%s with 400 code 1", async (field, value) => {
      const answer = await t.api("GET", "/pod/list", { key: null, query: { [field]: value } });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe(1);
      expect(answer.body.msg).toMatch(new RegExp(`^${field}: `));
    });

    it("accepts page_size 100, the cap", async () => {
      expect((await t.api("GET", "/pod/list", { key: null, query: { page_size: 100 } })).status).toBe(200);
    });
  });

  describe("GET /image/market/list", () => {
    it("lists at least six images with varied CUDA and Python versions and echoes page and page_size", async () => {
      const data = (await t.api("GET", "/image/market/list", { key: null })).body.data;
      expect(data.total).toBeGreaterThanOrEqual(6);
      expect(data).toMatchObject({ page: 1, page_size: 20 });
      const cudas = new Set(data.image_list.map((i: { components: { CUDA: string } }) => i.components.CUDA));
      const pythons = new Set(
        data.image_list.map((i: { components: { Python: string } }) => i.components.Python),
      );
      expect(cudas.size).toBeGreaterThanOrEqual(3);
      expect(pythons.size).toBeGreaterThanOrEqual(3);
      expect(Object.keys(data.image_list[0].components).sort()).toEqual([
        "CUDA",
        "PaddlePaddle",
        "PyTorch",
        "Python",
        "TensorFlow",
        "Ubuntu",
      ]);
      expect(data.image_list[0]).toMatchObject({
        uuid: expect.any(String),
        size: expect.any(Number),
        created_at: expect.any(Number),
        updated_at: expect.any(Number),
      });
    });

    it("filters by cuda_version and python_version together", async () => {
      const data = (
        await t.api("GET", "/image/market/list", {
          key: null,
          query: { cuda_version: "12.4", python_version: "3.11" },
        })
      ).body.data;
      expect(data.total).toBe(1);
      expect(data.image_list[0].components).toMatchObject({ CUDA: "12.4", Python: "3.11" });
    });

    it("matches a major version against its minor versions", async () => {
      const data = (await t.api("GET", "/image/market/list", { key: null, query: { cuda_version: "12" } }))
        .body.data;
      expect(data.total).toBeGreaterThan(1);
      for (const image of data.image_list) expect(image.components.CUDA).toMatch(/^12\./);
    });

    it("pages with page and page_size", async () => {
      const data = (await t.api("GET", "/image/market/list", { key: null, query: { page: 2, page_size: 4 } }))
        .body.data;
      expect(data).toMatchObject({ page: 2, page_size: 4 });
      expect(data.image_list).toHaveLength(Math.min(4, data.total - 4));
    });
  });

  it("keeps seed ids stable across a reset", async () => {
    const before = (await t.api("GET", "/pod/list", { key: null })).body.data;
    const gpusBefore = (await t.api("GET", "/gpu/list")).body.data;
    await t.admin("POST", "/reset");
    expect((await t.api("GET", "/pod/list", { key: null })).body.data).toEqual(before);
    expect((await t.api("GET", "/gpu/list")).body.data).toEqual(gpusBefore);
  });
});
