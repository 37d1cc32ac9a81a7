/**
 * The workflows room's routes: the workflow market, run submission and run queries, parsed and answered over
 * the store.
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { ok } from "../core/http/envelope";
import { StoreRoom, type RoomContext } from "../core/room";
import { MAX_IDEMPOTENCY_KEY_CHARACTERS, pagingQuery, parseBody, parseQuery } from "../core/http/validation";
import { AssetStore } from "../assets/store";
import type { WorkflowDefinition } from "./entries";
import { RUN_STATUSES, type WorkflowSnapshot, workflowsStateSchema } from "./state";
import { WorkflowStore } from "./store";

const marketListQuery = z.object({
  ...pagingQuery,
  sort: z.string().optional(),
  keyword: z.string().optional(),
  tag: z.string().optional(),
});
const workflowQuery = z.object({ workflow_id: z.string().min(1) });
const submitBody = z.object({
  workflow_id: z.string().min(1),
  revision_id: z.string().min(1).optional(),
  inputs: z.record(z.string(), z.unknown()).optional(),
  idempotency_key: z.string().min(1).max(MAX_IDEMPOTENCY_KEY_CHARACTERS),
  accept_external_cost_risk: z.boolean().optional(),
});
const runQuery = z.object({ run_order_id: z.string().min(1) });
const runListQuery = z.object({
  ...pagingQuery,
  workflow_id: z.string().min(1).optional(),
  status: z.enum(RUN_STATUSES, { message: `must be one of ${RUN_STATUSES.join(", ")}` }).optional(),
});

/**
 * Workflow market, run submission and run queries (docs/design/cloud-api.md#workflows;
 * docs/design/live-service-notes.md#workflow-runs).
 */
export class WorkflowsRoom extends StoreRoom<WorkflowSnapshot, WorkflowStore> {
  readonly name = "workflows";
  readonly stateSchema = workflowsStateSchema;

  constructor(
    private readonly ctx: RoomContext,
    assets: AssetStore,
    workflows: readonly WorkflowDefinition[],
  ) {
    super(new WorkflowStore(ctx.wallet, assets, ctx.ids.next, workflows));
  }

  register(api: FastifyInstance): void {
    api.get("/workflow/market/list", async (request) => {
      const user = this.ctx.currentUser(request);
      return ok(this.store.marketList(user, parseQuery(marketListQuery, request.query)));
    });

    api.get("/workflow/market/info", async (request) => {
      const user = this.ctx.currentUser(request);
      return ok(this.store.info(user, parseQuery(workflowQuery, request.query).workflow_id));
    });

    api.post("/workflow/run/submit", async (request) => {
      const user = this.ctx.currentUser(request);
      return ok(this.store.submit(user, parseBody(submitBody, request.body), this.ctx.clock.now()));
    });

    api.get("/workflow/run/info", async (request) => {
      const user = this.ctx.currentUser(request);
      return ok(this.store.runInfo(user, parseQuery(runQuery, request.query).run_order_id));
    });

    api.get("/workflow/run/list", async (request) => {
      const user = this.ctx.currentUser(request);
      return ok(this.store.runList(user, parseQuery(runListQuery, request.query)));
    });

    api.get("/workflow/run/execution", async (request) => {
      const user = this.ctx.currentUser(request);
      const { run_order_id } = parseQuery(runQuery, request.query);
      return ok(this.store.execution(user, run_order_id, this.ctx.clock.now()));
    });
  }
}
