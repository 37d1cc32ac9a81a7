/**
 * The catalogue room's entries: GPU models, pods and market images in the API's own field names, as
 * /gpu/list, /pod/list and /image/market/list return them. The built-in seed and a user's `--seed FILE` both
 * go through these schemas.
 */
import { z } from "zod";
import { nonEmpty, seconds } from "../core/state/schema";

const amount = z.number().min(0);

export const priceSchema = z.strictObject({
  hour: amount,
  day: amount.optional(),
  week: amount.optional(),
  month: amount.optional(),
  year: amount.optional(),
});
export type Price = z.infer<typeof priceSchema>;

export const gpuModelSchema = z.strictObject({
  gpu_name: nonEmpty,
  gpu_uuid: nonEmpty,
  status: z.int().refine((v) => v === 0 || v === 1, { message: "must be 1 (valid) or 0 (not available)" }),
  price: priceSchema,
});
export type GpuModel = z.infer<typeof gpuModelSchema>;

/** A web service an image exposes (an http entry of an instance's server_map), on a port inside the instance. */
export const webServiceSchema = z.strictObject({
  title: nonEmpty,
  port: z.int().min(1).max(65535),
});
export type WebService = z.infer<typeof webServiceSchema>;

export const podSchema = z.strictObject({
  title: nonEmpty,
  uuid: nonEmpty,
  remark: z.string().default(""),
  /**
   * Oldest first: the last tag is the latest version, which creation uses by default
   * (docs/design/cloud-api.md#versioning).
   */
  pod_tag: z.array(nonEmpty).min(1),
  price: priceSchema,
  /**
   * The emulator's own field, never shown by /pod/list: the web services an instance of this pod
   * exposes. Without it, one service named after the pod answers on port 8888.
   */
  web_services: z.array(webServiceSchema).min(1).optional(),
});
export type Pod = z.infer<typeof podSchema>;

const component = z.string().default("");

export const marketImageSchema = z.strictObject({
  uuid: nonEmpty,
  components: z.strictObject({
    CUDA: component,
    PaddlePaddle: component,
    PyTorch: component,
    Python: component,
    TensorFlow: component,
    Ubuntu: component,
  }),
  /** Bytes, a whole number (docs/design/cloud-api.md#catalogues). */
  size: z.int().min(0),
  created_at: seconds,
  updated_at: seconds,
});
export type MarketImage = z.infer<typeof marketImageSchema>;

/** The catalogue an emulator serves: the built-in seed, or the lists of a `--seed FILE`. */
export interface Catalogue {
  gpus: readonly GpuModel[];
  pods: readonly Pod[];
  market_images: readonly MarketImage[];
}
