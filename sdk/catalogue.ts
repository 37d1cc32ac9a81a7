/** Catalogues: GPU models, pods (application-market templates) and market images. */
import { z } from "zod";
import { endpoint, send, walk } from "./endpoints";
import type { PaginateOptions } from "./pagination";
import type { CallOptions, Transport } from "./transport";
import { int, listOf, whenSet } from "./zod-helpers";

export const PriceSchema = z.looseObject({
  hour: z.number(),
  day: whenSet(z.number()),
  week: whenSet(z.number()),
  month: whenSet(z.number()),
  year: whenSet(z.number()),
});
export type Price = z.infer<typeof PriceSchema>;

export const GpuSchema = z.looseObject({
  gpu_name: z.string(),
  gpu_uuid: z.string(),
  status: int.describe("0 invalid, 1 valid"),
  price: PriceSchema,
});
export type Gpu = z.infer<typeof GpuSchema>;

export const PodSchema = z.looseObject({
  title: z.string(),
  uuid: z.string(),
  remark: whenSet(z.string()),
  pod_tag: whenSet(z.array(z.string())).describe("version tags"),
  price: whenSet(PriceSchema),
});
export type Pod = z.infer<typeof PodSchema>;

export const MarketImageSchema = z.looseObject({
  uuid: z.string(),
  components: whenSet(
    z.looseObject({
      CUDA: whenSet(z.string()),
      PaddlePaddle: whenSet(z.string()),
      PyTorch: whenSet(z.string()),
      Python: whenSet(z.string()),
      TensorFlow: whenSet(z.string()),
      Ubuntu: whenSet(z.string()),
    }),
  ),
  size: whenSet(z.number()).describe("bytes"),
  created_at: whenSet(int),
  updated_at: whenSet(int),
});
export type MarketImage = z.infer<typeof MarketImageSchema>;

export const GpuListSchema = z.looseObject({ gpu_list: listOf(GpuSchema), total: int });
export const PodListSchema = z.looseObject({ pod_list: listOf(PodSchema), total: int });
export const MarketImageListSchema = z.looseObject({
  image_list: listOf(MarketImageSchema),
  total: int,
  page: whenSet(int),
  page_size: whenSet(int),
});
export type GpuList = z.infer<typeof GpuListSchema>;
export type PodList = z.infer<typeof PodListSchema>;
export type MarketImageList = z.infer<typeof MarketImageListSchema>;

export interface PodQuery {
  page?: number;
  page_size?: number;
  /** Fuzzy match on the title. */
  name?: string;
}

export interface MarketImageQuery {
  page?: number;
  page_size?: number;
  cuda_version?: string;
  python_version?: string;
}

/** Every endpoint of the area, once. */
const ENDPOINTS = {
  gpus: endpoint("GET /gpu/list", "read", GpuListSchema, {
    action: "list GPU models",
  }),
  pods: endpoint("GET /pod/list", "read", PodListSchema, {
    action: "list pods",
    request: (query: PodQuery) => ({ query: { ...query } }),
    items: "pod_list",
  }),
  marketImages: endpoint("GET /image/market/list", "read", MarketImageListSchema, {
    action: "list market images",
    request: (query: MarketImageQuery) => ({ query: { ...query } }),
    items: "image_list",
  }),
};

export class Catalogue {
  constructor(private readonly transport: Transport) {}

  gpus(options: CallOptions = {}): Promise<GpuList> {
    return send(this.transport, ENDPOINTS.gpus, [], options);
  }

  /** Public endpoint: works without an API key. */
  pods(query: PodQuery = {}, options: CallOptions = {}): Promise<PodList> {
    return send(this.transport, ENDPOINTS.pods, [query], options);
  }

  podsAll(filters: { name?: string } = {}, options: PaginateOptions = {}): AsyncIterable<Pod> {
    return walk(this.transport, ENDPOINTS.pods, filters, options);
  }

  /** Public endpoint: works without an API key. */
  marketImages(query: MarketImageQuery = {}, options: CallOptions = {}): Promise<MarketImageList> {
    return send(this.transport, ENDPOINTS.marketImages, [query], options);
  }

  marketImagesAll(
    filters: { cuda_version?: string; python_version?: string } = {},
    options: PaginateOptions = {},
  ): AsyncIterable<MarketImage> {
    return walk(this.transport, ENDPOINTS.marketImages, filters, options);
  }
}
