/**
 * The images room's routes: /image/private/list and /image/private/delete, parsed and answered over the
 * store.
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { ok } from "../core/http/envelope";
import { StoreRoom, type RoomContext } from "../core/room";
import { parseBody } from "../core/http/validation";
import { ImagesStore } from "./store";
import { type ImageRecord, imagesStateSchema } from "./state";

const deleteBody = z.object({ image_uuid: z.string().min(1) });

/** Personal images: /image/private/list and /image/private/delete. */
export class ImagesRoom extends StoreRoom<ImageRecord[], ImagesStore> {
  readonly name = "images";
  readonly stateSchema = imagesStateSchema;

  constructor(
    private readonly ctx: RoomContext,
    saveSeconds: number,
  ) {
    super(new ImagesStore(() => ctx.clock.now(), ctx.ids.next, saveSeconds));
  }

  register(api: FastifyInstance): void {
    api.get("/image/private/list", async (request) => {
      const images = this.store.list(this.ctx.currentUser(request));
      return ok({ image_list: images, total: images.length });
    });

    api.post("/image/private/delete", async (request) => {
      const user = this.ctx.currentUser(request);
      const { image_uuid } = parseBody(deleteBody, request.body);
      this.store.delete(user, image_uuid);
      return ok();
    });
  }
}
