import { AuthenticationError } from "pulumi-gpucloud/sdk";
import {
  clearCatalogueCache,
  getBalance,
  getGpu,
  getGpuOutput,
  getGpus,
  getInstances,
  getMarketImages,
  getPersonalImages,
  getPod,
  getPodOutput,
  getPods,
} from "../../provider/datasources";
import { connectionFor, requests, useDataSourceCloud } from "../support/data-source-cloud";
import { resolveOutput } from "./outputs";

const emu = useDataSourceCloud();

describe("one catalogue fetch per run", () => {
  it("serves every concurrent GPU lookup, in both forms, from one GET /gpu/list", async () => {
    const opts = connectionFor(emu);
    const results = await Promise.all([
      getGpus({}, opts),
      getGpus({ includeInvalid: true }, opts),
      getGpu({ name: "4080" }, opts),
      getGpu({ name: "4090D" }, opts),
      resolveOutput(getGpuOutput({ name: "5090" }, opts)),
    ]);
    expect(results).toHaveLength(5);
    expect(await requests(emu, "/gpu/list")).toHaveLength(1);
  });

  it("serves later lookups from the settled fetch without calling the cloud again", async () => {
    const opts = connectionFor(emu);
    await getGpus({}, opts);
    await getGpu({ name: "4090D" }, opts);
    await getGpu({ name: "5090" }, opts);
    expect(await requests(emu, "/gpu/list")).toHaveLength(1);
  });

  it("does not serve the GPU list fetched with one key to a request with a bad key", async () => {
    const opts = connectionFor(emu);
    await getGpus({}, opts);
    await expect(getGpu({ name: "4090D" }, { ...opts, apiKey: "not-a-key" })).rejects.toBeInstanceOf(
      AuthenticationError,
    );
    expect(await requests(emu, "/gpu/list")).toHaveLength(2);
  });

  it("walks the pod catalogue once for every getPod and the unfiltered getPods", async () => {
    const opts = { ...connectionFor(emu), pageSize: 2 };
    const [{ pods }] = await Promise.all([
      getPods({}, opts),
      getPod({ title: "ComfyUI" }, opts),
      getPod({ title: "Stable Diffusion WebUI" }, opts),
      resolveOutput(getPodOutput({ title: "ComfyUI", tag: "v1.0.0" }, opts)),
    ]);
    await getPod({ title: "JupyterLab PyTorch" }, opts);
    // One walk: a request per page of 2, the empty page after a full last one included.
    expect(await requests(emu, "/pod/list")).toHaveLength(Math.floor(pods.length / 2) + 1);
  });

  it("fetches once per distinct filter", async () => {
    const opts = connectionFor(emu);
    await Promise.all([
      getPods({ name: "webui" }, opts),
      getPods({ name: "webui" }, opts),
      getPods({}, opts),
    ]);
    await Promise.all([
      getMarketImages({ cudaVersion: "12.4" }, opts),
      getMarketImages({ cudaVersion: "12.4" }, opts),
      getMarketImages({ cudaVersion: "12.4", pythonVersion: "3.11" }, opts),
    ]);
    expect(await requests(emu, "/pod/list")).toHaveLength(2);
    expect(await requests(emu, "/image/market/list")).toHaveLength(2);
  });

  it("fetches afresh after clearCatalogueCache", async () => {
    const opts = connectionFor(emu);
    await getGpus({}, opts);
    clearCatalogueCache();
    await getGpus({}, opts);
    expect(await requests(emu, "/gpu/list")).toHaveLength(2);
  });

  it("does not remember a failed fetch: the next lookup tries again", async () => {
    await expect(getGpus({}, connectionFor(emu, "not-a-key"))).rejects.toBeInstanceOf(AuthenticationError);
    await expect(getGpu({ name: "4080" }, connectionFor(emu))).resolves.toMatchObject({ gpuName: "4080" });
    expect(await requests(emu, "/gpu/list")).toHaveLength(2);
  });
});

describe("what is never cached", () => {
  it("reads instances, personal images and the balance afresh on every call", async () => {
    const opts = connectionFor(emu);
    for (let i = 0; i < 2; i++) {
      await getInstances(opts);
      await getPersonalImages(opts);
      await getBalance(opts);
    }
    expect(await requests(emu, "/instance/list")).toHaveLength(2);
    expect(await requests(emu, "/image/private/list")).toHaveLength(2);
    expect(await requests(emu, "/balance/info")).toHaveLength(2);
  });
});
