/**
 * What the cost guard prices an instance at, as the cloud bills it: an image's instance by the image's
 * source pod (a market image by its GPUs alone), and an instance with fallback GPU models at the dearest
 * model it may land on until it exists. Through the budget's whole-stack check at preview.
 */
import { getMarketImages } from "../../provider/datasources";
import { stackHourlyBudget } from "../../provider/policy";
import { KEY, OTHER_KEY, useGuardCloud } from "./guard-cloud";
import { checkStack, GPU_4090D, GPU_5090, instance, NATIVE, UNKNOWN } from "./stack-view";

const cloud = useGuardCloud();

/** The one line the budget's message gives `name`, with everything over a budget of 0 listed. */
async function priced(...fleet: ReturnType<typeof instance>[]): Promise<string> {
  const { violations } = await checkStack(stackHourlyBudget, fleet, { maxHourlyCost: 0 });
  return violations.map((v) => v.message).join("\n");
}

describe("an instance made from an image", () => {
  it("is priced by the pod its personal image was saved from, as the cloud bills it", async () => {
    const imageUuid = await cloud.personalImage();
    const fromImage = instance("img", { podUuid: undefined, imageUuid, gpuNums: 2 }, NATIVE);
    expect(await priced(fromImage)).toContain(
      "  img: 3.96 CNY/h (image of pod ComfyUI 0.2 + 4090D 1.88 × 2)",
    );
  });

  it("finds an image saved after the run first read the image list", async () => {
    const first = await cloud.personalImage();
    expect(await priced(instance("a", { podUuid: undefined, imageUuid: first }))).toContain(
      "image of pod ComfyUI",
    );
    const second = await cloud.personalImage();
    expect(await priced(instance("b", { podUuid: undefined, imageUuid: second }))).toContain(
      "image of pod ComfyUI",
    );
    // Making an image lists the images twice; the run read the list twice, the second time on the miss.
    expect(await cloud.calls("/image/private/list")).toBe(2 * 2 + 2);
  });

  it("from a market image is priced by its GPUs alone, and says so", async () => {
    const [market] = (await getMarketImages({}, { baseUrl: cloud.emulator.url })).images;
    const fromMarket = instance("jupyter", { podUuid: undefined, imageUuid: market.imageUuid });
    expect(await priced(fromMarket)).toContain(
      "  jupyter: 1.88 CNY/h (market image (no pod price) + 4090D 1.88 × 1)",
    );
  });

  it("is a violation naming the image when the stack's key cannot see it, never a pass at no pod price", async () => {
    const othersImage = await cloud.personalImage(OTHER_KEY);
    const unseen = instance("unseen", { podUuid: undefined, imageUuid: othersImage });
    const { violations } = await checkStack(stackHourlyBudget, [unseen], { maxHourlyCost: 100 });
    expect(violations).toEqual([
      {
        message:
          `"unseen" cannot be priced: its imageUuid ${othersImage} is neither one of this API key's personal ` +
          "images nor a market image, so what the cloud bills for it is not known. Check the imageUuid and the " +
          "stack's gpucloud:apiKey. The hourly budget cannot be checked.",
        urn: unseen.urn,
      },
    ]);
    expect(JSON.stringify(violations)).not.toContain(KEY);
  });

  it("not known until up is priced at the dearest pod", async () => {
    const later = instance("later", { podUuid: undefined, imageUuid: UNKNOWN });
    expect(await priced(later)).toContain(
      "  later: 2.08 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 1; worst case: imageUuid is not known until up: " +
        "priced at the dearest pod, ComfyUI)",
    );
  });
});

describe("an instance with fallback GPU models (fallbackGpuUuids)", () => {
  it("still to be made, is priced at the dearest model of its list, and the message says so", async () => {
    const listed = instance("listed", { gpuUuid: GPU_4090D, fallbackGpuUuids: [GPU_5090], gpuNums: 2 });
    expect(await priced(listed)).toContain(
      "  listed: 6.16 CNY/h (pod ComfyUI 0.2 + 5090 2.98 × 2; worst case: fallbackGpuUuids: the model is " +
        "chosen at create, so priced at the dearest of the list, 5090)",
    );
  });

  it("already made, at the model it got (its gpuUuid output)", async () => {
    const made = instance("made", {
      instanceUuid: "ins-1",
      gpuUuid: GPU_4090D,
      fallbackGpuUuids: [GPU_5090],
      gpuNums: 2,
    });
    expect(await priced(made)).toContain("  made: 3.96 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 2)\n");
  });

  it("a list not known until up, at the dearest valid model", async () => {
    const later = instance("later", { fallbackGpuUuids: UNKNOWN });
    expect(await priced(later)).toContain(
      "worst case: fallbackGpuUuids is not known until up: priced at the dearest valid GPU model, 5090",
    );
    const oneLater = instance("one-later", { fallbackGpuUuids: [GPU_4090D, UNKNOWN] });
    expect(await priced(oneLater)).toContain("fallbackGpuUuids is not known until up");
  });

  it("naming a model the catalogue lacks cannot be priced, and the message names the item", async () => {
    const odd = instance("odd", { fallbackGpuUuids: [GPU_5090, "gpu-nowhere"] });
    const { violations } = await checkStack(stackHourlyBudget, [odd], { maxHourlyCost: 100 });
    expect(violations[0].message).toBe(
      '"odd" cannot be priced: its fallbackGpuUuids[1] (gpu-nowhere) is not a GPU model of the cloud\'s ' +
        "catalogue. The hourly budget cannot be checked.",
    );
  });
});
