/**
 * The GPU stock room's settings: a model's stock as the admin API, the console and the `gpuStock` option take
 * it, checked and resolved against the catalogue.
 */
import { z } from "zod";
import type { CatalogueStore } from "../catalogue/store";
import { checkOption, OptionError } from "../core/options";
import { cardCount, probability, randomSeed } from "./state";
import type { StockSetting } from "./store";

/** Free cards: a whole number of at least 0, or null for unlimited. */
const freeCards = z.custom<number | null>((value) => value === null || cardCount.safeParse(value).success, {
  message: "must be a whole number of cards, at least 0, or null for unlimited",
});

/**
 * A model's stock as the admin API (`PUT /_emulator/gpus/{gpu}/stock`), the console and the `gpuStock`
 * option take it. A typo is refused, not ignored: it would leave a benchmark playing another cloud.
 */
export const stockSettingSchema = z
  .strictObject({
    free: freeCards,
    refuse_probability: probability.optional(),
    seed: randomSeed.optional(),
  })
  .superRefine((setting, ctx) => {
    if (setting.seed !== undefined && !setting.refuse_probability) {
      ctx.addIssue({
        code: "custom",
        path: ["seed"],
        message: "only applies with a refuse_probability above 0",
      });
    }
  });

/** The `gpuStock` option: per model (gpu_name or gpu_uuid), its free cards or a whole setting. */
const gpuStockOption = z.record(
  z.string(),
  z.preprocess(
    (value) => (typeof value === "object" && value !== null ? value : { free: value }),
    stockSettingSchema,
  ),
);

/** The `gpuStock` option by gpu_uuid; a model the catalogue does not have, or names twice, is refused naming it. */
export function resolveGpuStock(given: unknown, catalogue: CatalogueStore): Map<string, StockSetting> {
  const settings = checkOption("gpuStock", gpuStockOption, given ?? {});
  const resolved = new Map<string, StockSetting>();
  // The models as given (own keys, __proto__ included): the schema's copy could have dropped one.
  for (const name of Object.keys(given ?? {})) {
    const gpu = modelNamed(name, catalogue);
    if (resolved.has(gpu)) throw new OptionError("gpuStock", `${name} names a GPU model given already`);
    resolved.set(gpu, settings[name]);
  }
  return resolved;
}

function modelNamed(name: string, catalogue: CatalogueStore): string {
  const found = catalogue.gpuCalled(name);
  if ("problem" in found) throw new OptionError("gpuStock", found.problem);
  return found.gpu.gpu_uuid;
}
