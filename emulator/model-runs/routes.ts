/**
 * The model-runs room's routes: submit, list, cancel and the events of external video-model tasks, scoped to
 * the calling API key, parsed and answered over the store.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { ok } from "../core/http/envelope";
import { StoreRoom, type RoomContext } from "../core/room";
import { MAX_IDEMPOTENCY_KEY_CHARACTERS, pagingQuery, parseBody, parseQuery } from "../core/http/validation";
import { AssetStore } from "../assets/store";
import type { VideoModel } from "./models";
import { MODEL_RUN_STATUSES, type ModelRunSnapshot, modelRunsStateSchema } from "./state";
import { ModelRunStore } from "./store";

const submitBody = z.object({
  idempotency_key: z.string().min(1).max(MAX_IDEMPOTENCY_KEY_CHARACTERS),
  request_id: z.string().min(1).max(256).optional(),
  inputs: z.record(z.string(), z.unknown()),
});
const listQuery = z.object({
  ...pagingQuery,
  status: z
    .enum(MODEL_RUN_STATUSES, { message: `must be one of ${MODEL_RUN_STATUSES.join(", ")}` })
    .optional(),
});
const cancelBody = z.object({ run_id: z.string().min(1) });
const eventsQuery = z.object({ run_id: z.string().min(1) });

/** External video-model tasks (docs/design/cloud-api.md#model-runs), scoped to the calling API key. */
export class ModelRunsRoom extends StoreRoom<ModelRunSnapshot, ModelRunStore> {
  readonly name = "model-runs";
  readonly stateSchema = modelRunsStateSchema;

  constructor(
    private readonly ctx: RoomContext,
    assets: AssetStore,
    models: readonly VideoModel[],
  ) {
    super(new ModelRunStore(ctx.wallet, assets, ctx.ids.next, models));
  }

  register(api: FastifyInstance): void {
    api.post("/model-runs/videos", async (request) => {
      const { user, scope } = this.caller(request);
      return ok(this.store.submit(scope, user, parseBody(submitBody, request.body), this.ctx.clock.now()));
    });

    api.get("/model-runs/list", async (request) => {
      const { scope } = this.caller(request);
      return ok(this.store.list(scope, parseQuery(listQuery, request.query)));
    });

    api.post("/model-runs/cancel", async (request) => {
      const { scope } = this.caller(request);
      return ok(this.store.cancel(scope, parseBody(cancelBody, request.body).run_id, this.ctx.clock.now()));
    });

    api.get("/model-runs/events", async (request) => {
      const { scope } = this.caller(request);
      return ok(this.store.events(scope, parseQuery(eventsQuery, request.query).run_id));
    });
  }

  /** The user pays; the key is the scope of the model-runs list (docs/design/cloud-api.md#model-runs). */
  private caller(request: FastifyRequest): { user: string; scope: string } {
    return { user: this.ctx.currentUser(request), scope: this.ctx.currentKeyId(request) };
  }
}
