import {
  AmbiguousMatchError,
  getGpu,
  getGpuOutput,
  getGpus,
  getGpusOutput,
  NoMatchError,
} from "../../provider/datasources";
import type { GpuModel } from "../../provider/datasources";
import { matchGpuName, pickGpu } from "../../provider/datasources/gpus";
import { connectionFor, requests, useDataSourceCloud } from "../support/data-source-cloud";
import { resolveOutput } from "./outputs";

const emu = useDataSourceCloud();
let opts: { baseUrl: string; apiKey: string };

beforeAll(() => {
  opts = connectionFor(emu);
});

describe("getGpus", () => {
  it("lists the valid models with hourly prices in CNY", async () => {
    const { gpus } = await getGpus({}, opts);
    expect(gpus.map((g) => g.gpuName).sort()).toEqual(["4080", "4090D", "5090"]);
    for (const gpu of gpus) {
      expect(gpu.valid).toBe(true);
      expect(gpu.status).toBe(1);
      expect(typeof gpu.hourlyPrice).toBe("number");
      expect(gpu.hourlyPrice).toBeGreaterThan(0);
      expect(gpu.currency).toBe("CNY");
      expect(gpu.price.hour).toBe(gpu.hourlyPrice);
      expect(gpu.price.currency).toBe("CNY");
      expect(gpu.gpuUuid).toEqual(expect.any(String));
    }
  });

  it("refuses a bad page size as every data source does, though the GPU list has no pages", async () => {
    await expect(getGpus({}, { ...opts, pageSize: 0 })).rejects.toThrow(
      "pageSize is 0; it must be an integer from 1 to 100.",
    );
    expect(await requests(emu)).toHaveLength(0);
  });

  it("adds the invalid models (status 0) when includeInvalid is set", async () => {
    const { gpus } = await getGpus({ includeInvalid: true }, opts);
    const invalid = gpus.filter((g) => !g.valid);
    expect(invalid.length).toBeGreaterThanOrEqual(1);
    expect(invalid.every((g) => g.status === 0)).toBe(true);
    expect(gpus.filter((g) => g.valid)).toHaveLength(3);
  });

  it("has an Output form that takes Inputs", async () => {
    const { gpus } = await resolveOutput(getGpusOutput({ includeInvalid: Promise.resolve(false) }, opts));
    expect(gpus).toHaveLength(3);
  });
});

describe("getGpu", () => {
  it.each(["4090D", "4090d", " 4090D "])(
    "finds the 4090D model from %j, ignoring case and spaces",
    async (name) => {
      const gpu = await getGpu({ name }, opts);
      expect(gpu.gpuName).toBe("4090D");
      expect(gpu.valid).toBe(true);
    },
  );

  it("gives the same model as getGpus", async () => {
    const [{ gpus }, gpu] = await Promise.all([getGpus({}, opts), getGpu({ name: "5090" }, opts)]);
    expect(gpus.find((g) => g.gpuName === "5090")).toEqual(gpu);
  });

  it("does not take 4090 for 4090D, and lists the valid models", async () => {
    const failure = getGpu({ name: "4090" }, opts);
    await expect(failure).rejects.toBeInstanceOf(NoMatchError);
    await expect(failure).rejects.toThrow(
      'no GPU model named "4090" among the valid GPU models: 4080, 4090D, 5090',
    );
    await expect(failure).rejects.toMatchObject({ available: ["4080", "4090D", "5090"] });
  });

  it("refuses an invalid model unless includeInvalid is set, and says how to get it", async () => {
    const { gpus } = await getGpus({ includeInvalid: true }, opts);
    const invalid = gpus.find((g) => !g.valid);
    if (invalid === undefined) throw new Error("the seed catalogue has no invalid GPU model");
    await expect(getGpu({ name: invalid.gpuName }, opts)).rejects.toThrow(
      `"${invalid.gpuName}" exists but is invalid (status 0); pass includeInvalid: true`,
    );
    await expect(getGpu({ name: invalid.gpuName, includeInvalid: true }, opts)).resolves.toMatchObject({
      gpuUuid: invalid.gpuUuid,
      valid: false,
    });
  });

  it("refuses an empty name before calling the cloud", async () => {
    await expect(getGpu({ name: "  " }, opts)).rejects.toThrow("getGpu: name is empty");
    expect(await requests(emu)).toHaveLength(0);
  });

  it("has an Output form that takes Inputs", async () => {
    const gpu = await resolveOutput(getGpuOutput({ name: Promise.resolve("4080") }, opts));
    expect(gpu.gpuName).toBe("4080");
  });
});

describe("choosing a GPU model by name", () => {
  const model = (gpuName: string, status = 1): GpuModel => ({
    gpuUuid: `uuid-${gpuName}`,
    gpuName,
    status,
    valid: status === 1,
    hourlyPrice: 1,
    currency: "CNY",
    price: { hour: 1, currency: "CNY" },
  });

  it("prefers an exact match over word matches", () => {
    expect(pickGpu([model("RTX 4090D"), model("4090D")], { name: "4090d" }).gpuName).toBe("4090D");
  });

  it("matches whole words of a longer name, never part of a word", () => {
    expect(pickGpu([model("NVIDIA RTX 4090D"), model("5090")], { name: "rtx-4090d" }).gpuName).toBe(
      "NVIDIA RTX 4090D",
    );
    expect(matchGpuName([model("4090D")], "4090")).toEqual([]);
  });

  it("reports several word matches as ambiguous, naming each with its uuid", () => {
    const catalogue = [model("RTX 4090D 24G"), model("RTX 4090D 48G"), model("5090")];
    const choose = () => pickGpu(catalogue, { name: "4090D" });
    expect(choose).toThrow(AmbiguousMatchError);
    expect(choose).toThrow(
      'getGpu: "4090D" matches 2 valid GPU models: RTX 4090D 24G (uuid-RTX 4090D 24G), RTX 4090D 48G (uuid-RTX 4090D 48G). Pass the full model name.',
    );
  });

  it("reports a valid and an invalid model of one name as ambiguous only when invalid ones are included", () => {
    const catalogue = [model("4080"), model("4080", 0)];
    expect(pickGpu(catalogue, { name: "4080" }).valid).toBe(true);
    expect(() => pickGpu(catalogue, { name: "4080", includeInvalid: true })).toThrow(
      "matches 2 GPU models: 4080 (uuid-4080), 4080 (uuid-4080, invalid)",
    );
  });
});
