/** Catalogues: GPU models, pods (application-market templates) and market images. */
import { z } from "zod";
import { paginate, type PaginateOptions } from "./pagination";
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

export class Catalogue {
  constructor(private readonly transport: Transport) {}

  gpus(options: CallOptions = {}): Promise<GpuList> {
    return this.transport.call(
      {
        method: "GET",
        path: "/gpu/list",
        safety: "read",
        action: "list GPU models",
        schema: GpuListSchema,
      },
      options,
    );
  }

  /** Public endpoint: works without an API key. */
  pods(query: PodQuery = {}, options: CallOptions = {}): Promise<PodList> {
    return this.transport.call(
      {
        method: "GET",
        path: "/pod/list",
        query: { ...query },
        safety: "read",
        action: "list pods",
        schema: PodListSchema,
      },
      options,
    );
  }

  podsAll(filters: { name?: string } = {}, options: PaginateOptions = {}): AsyncIterable<Pod> {
    return paginate(
      async (page, page_size) => {
        const res = await this.pods({ ...filters, page, page_size }, options);
        return { items: res.pod_list, total: res.total };
      },
      options,
      { action: "list pods", method: "GET", path: "/pod/list" },
    );
  }

  /** Public endpoint: works without an API key. */
  marketImages(query: MarketImageQuery = {}, options: CallOptions = {}): Promise<MarketImageList> {
    return this.transport.call(
      {
        method: "GET",
        path: "/image/market/list",
        query: { ...query },
        safety: "read",
        action: "list market images",
        schema: MarketImageListSchema,
      },
      options,
    );
  }

  marketImagesAll(
    filters: { cuda_version?: string; python_version?: string } = {},
    options: PaginateOptions = {},
  ): AsyncIterable<MarketImage> {
    return paginate(
      async (page, page_size) => {
        const res = await this.marketImages({ ...filters, page, page_size }, options);
        return { items: res.image_list, total: res.total };
      },
      options,
      { action: "list market images", method: "GET", path: "/image/market/list" },
    );
  }
}
