import {
  estimateHourlyPrice,
  estimateHourlyPriceOutput,
  getGpu,
  getGpuOutput,
  getPod,
  getPodOutput,
} from "../../provider/datasources";
import { connectionFor, useDataSourceCloud } from "../support/data-source-cloud";
import { resolveOutput } from "./outputs";

const emu = useDataSourceCloud();

describe("estimateHourlyPrice", () => {
  it("adds the pod's hourly price to the GPU's times gpuNums, labelled an estimate", async () => {
    const pod = await getPod({ title: "ComfyUI" }, connectionFor(emu));
    const gpu = await getGpu({ name: "4090D" }, connectionFor(emu));
    const estimate = estimateHourlyPrice({ pod, gpu, gpuNums: 2 });
    expect(estimate.amount).toBeCloseTo((pod.hourlyPrice ?? NaN) + gpu.hourlyPrice * 2, 10);
    expect(estimate).toMatchObject({ currency: "CNY", estimate: true });
    expect(estimate.basis).toBe(
      `pod "ComfyUI" ${pod.hourlyPrice} CNY/h + GPU 4090D ${gpu.hourlyPrice} CNY/h × 2; ` +
        "the formula public clients of the live service use, unconfirmed by the cloud",
    );
  });

  it("adds decimals exactly, as people read them", () => {
    const estimate = estimateHourlyPrice({
      pod: { hourlyPrice: 0.1, currency: "CNY" },
      gpu: { hourlyPrice: 0.2, currency: "CNY" },
      gpuNums: 1,
    });
    expect(estimate.amount).toBe(0.3);
  });

  it("refuses a GPU count the cloud does not rent", () => {
    const priced = { hourlyPrice: 1, currency: "CNY" };
    expect(() => estimateHourlyPrice({ pod: priced, gpu: priced, gpuNums: 3 })).toThrow(
      "estimateHourlyPrice: gpuNums is 3; allowed values are 1, 2, 4, 8.",
    );
  });

  it("refuses a pod without a price and prices in another currency", () => {
    const gpu = { hourlyPrice: 1, currency: "CNY" };
    expect(() => estimateHourlyPrice({ pod: { currency: "CNY" }, gpu, gpuNums: 1 })).toThrow(
      "estimateHourlyPrice: the pod has no hourly price (the catalogue lists none), so no estimate can be made.",
    );
    expect(() => estimateHourlyPrice({ pod: { hourlyPrice: 1, currency: "USD" }, gpu, gpuNums: 1 })).toThrow(
      'estimateHourlyPrice: pod.currency is "USD"; only CNY prices can be added.',
    );
  });

  it("has an Output form that takes the Output forms of getPod and getGpu", async () => {
    const pod = getPodOutput({ title: "Stable Diffusion WebUI" }, connectionFor(emu));
    const gpu = getGpuOutput({ name: "5090" }, connectionFor(emu));
    const estimate = await resolveOutput(estimateHourlyPriceOutput({ pod, gpu, gpuNums: 4 }));
    const [p, g] = await Promise.all([resolveOutput(pod), resolveOutput(gpu)]);
    expect(estimate.amount).toBeCloseTo((p.hourlyPrice ?? NaN) + g.hourlyPrice * 4, 10);
    expect(estimate.estimate).toBe(true);
  });
});
