/**
 * The catalogue room's routes: /gpu/list, /pod/list and /image/market/list, parsed and answered over the
 * store.
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { ok } from "../core/http/envelope";
import type { Room } from "../core/room";
import { DEFAULT_PAGE_SIZE, paginate, pagingQuery, parseQuery } from "../core/http/validation";
import { CatalogueStore } from "./store";

const podListQuery = z.object({ ...pagingQuery, name: z.string().optional() });
const marketListQuery = z.object({
  ...pagingQuery,
  cuda_version: z.string().optional(),
  python_version: z.string().optional(),
});

/** GPU models, pods and market images. The catalogue is fixed seed data: nothing to save or reset. */
export class CatalogueRoom implements Room<null> {
  readonly name = "catalogue";
  readonly stateSchema = z.null();

  constructor(readonly store: CatalogueStore) {}

  register(api: FastifyInstance): void {
    api.get("/gpu/list", async () => {
      const gpus = this.store.gpus();
      return ok({ gpu_list: gpus, total: gpus.length });
    });

    api.get("/pod/list", { config: { public: true } }, async (request) => {
      const query = parseQuery(podListQuery, request.query);
      const pods = this.store.pods(query.name);
      return ok({ pod_list: paginate(pods, query.page, query.page_size), total: pods.length });
    });

    api.get("/image/market/list", { config: { public: true } }, async (request) => {
      const query = parseQuery(marketListQuery, request.query);
      const images = this.store.marketImages(query);
      const page = query.page ?? 1;
      const pageSize = query.page_size ?? DEFAULT_PAGE_SIZE;
      return ok({
        image_list: paginate(images, page, pageSize),
        total: images.length,
        page,
        page_size: pageSize,
      });
    });
  }

  snapshot(): null {
    return null;
  }

  restore(): void {}

  reset(): void {}
}
