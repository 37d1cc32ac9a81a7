import { GpuCloudClient } from "pulumi-gpucloud/sdk";
import {
  getGpu,
  getMarketImages,
  getMarketImagesOutput,
  getPersonalImages,
  getPersonalImagesOutput,
  getPod,
} from "../../provider/datasources";
import {
  advance,
  connectionFor,
  OTHER_KEY,
  requests,
  useDataSourceCloud,
  freshStart,
} from "../support/data-source-cloud";
import { resolveOutput } from "./outputs";

const emu = useDataSourceCloud();

describe("getMarketImages", () => {
  it("lists every market image with its components, without an API key", async () => {
    const { images } = await getMarketImages({}, { baseUrl: emu.url });
    expect(images.length).toBeGreaterThanOrEqual(3);
    for (const image of images) {
      expect(image.imageUuid).toEqual(expect.any(String));
      expect(image.components.cuda).not.toBe("");
      expect(image.components.python).not.toBe("");
      expect(image.sizeBytes).toBeGreaterThan(0);
    }
    expect(new Set(images.map((i) => i.components.cuda)).size).toBeGreaterThan(1);
  });

  it("filters by CUDA version, Python version, or both", async () => {
    const { images: all } = await getMarketImages({}, { baseUrl: emu.url });
    const cuda = all[0].components.cuda;
    const python = all[0].components.python;
    const byCuda = await getMarketImages({ cudaVersion: cuda }, { baseUrl: emu.url });
    const byPython = await getMarketImages({ pythonVersion: python }, { baseUrl: emu.url });
    const byBoth = await getMarketImages({ cudaVersion: cuda, pythonVersion: python }, { baseUrl: emu.url });
    expect(byCuda.images.length).toBeGreaterThan(0);
    expect(byCuda.images.length).toBeLessThan(all.length);
    expect(byCuda.images.every((i) => i.components.cuda === cuda)).toBe(true);
    expect(byPython.images.every((i) => i.components.python === python)).toBe(true);
    expect(byBoth.images.every((i) => i.components.cuda === cuda && i.components.python === python)).toBe(
      true,
    );
    expect(byBoth.images.map((i) => i.imageUuid)).toContain(all[0].imageUuid);
  });

  it("walks every page when pages are smaller than the catalogue", async () => {
    const { images: onePage } = await getMarketImages({}, { baseUrl: emu.url });
    await freshStart(emu);
    const { images: paged } = await getMarketImages({}, { baseUrl: emu.url, pageSize: 2 });
    expect(paged).toEqual(onePage);
    expect(await requests(emu, "/image/market/list")).toHaveLength(Math.ceil(onePage.length / 2));
  });

  it("has an Output form that takes Inputs", async () => {
    const { images } = await resolveOutput(
      getMarketImagesOutput({ cudaVersion: Promise.resolve("12.4") }, { baseUrl: emu.url }),
    );
    expect(images.length).toBeGreaterThan(0);
    expect(images.every((i) => i.components.cuda === "12.4")).toBe(true);
  });
});

describe("getPersonalImages", () => {
  it("lists the caller's saved images, and only the caller's", async () => {
    const opts = connectionFor(emu);
    expect((await getPersonalImages(opts)).images).toEqual([]);

    const pod = await getPod({ title: "ComfyUI" }, opts);
    const gpu = await getGpu({ name: "4080" }, opts);
    const client = new GpuCloudClient({ baseUrl: emu.url, apiKey: opts.apiKey });
    try {
      const instance = await client.instances.createByPod({
        pod_uuid: pod.podUuid,
        gpu_uuid: gpu.gpuUuid,
        gpu_nums: 1,
      });
      await advance(emu, 60);
      await client.instances.saveImage(instance.instance_uuid);
      const uploading = (await getPersonalImages(opts)).images;
      await advance(emu, 120);
      const { images } = await getPersonalImages(opts);

      expect(images).toHaveLength(1);
      expect(uploading.map((i) => i.saveImageStatusName)).toEqual(["uploading"]);
      expect(images[0]).toMatchObject({
        imageUuid: uploading[0].imageUuid,
        podUuid: pod.podUuid,
        podTag: pod.latestTag,
        saveImageStatus: 2,
        saveImageStatusName: "saved",
      });
      expect((await getPersonalImages(connectionFor(emu, OTHER_KEY))).images).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("has an Output form", async () => {
    const { images } = await resolveOutput(getPersonalImagesOutput(connectionFor(emu)));
    expect(images).toEqual([]);
  });
});
