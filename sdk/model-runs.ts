/** External video-model runs: submit, list, cancel, events, waiting for a terminal status. */
import { z } from "zod";
import { endpoint, refusal, send, walk, type Request } from "./endpoints";
import { NotFoundError } from "./errors";
import type { PaginateOptions } from "./pagination";
import type { CallOptions, Transport } from "./transport";
import { checkModelRunInputs, idempotencyKey, issuesOf } from "./validation";
import { pollUntil, type WaitOptions } from "./waiters";
import { decimal, int, listOf, runStatus, whenSet, withRunStatus } from "./zod-helpers";

export const ModelRunSchema = z.looseObject({
  run_id: z.string(),
  request_id: whenSet(z.string()),
  endpoint: whenSet(z.string()),
  model: whenSet(z.string()),
  provider: whenSet(z.string()),
  gateway_task_id: whenSet(z.string()),
  status: runStatus.describe("created, queued, running, completed, failed, cancelled"),
  settlement_status: whenSet(z.string()).describe("pending, settled, released"),
  frozen_amount: whenSet(decimal),
  released_amount: whenSet(decimal),
  error_code: whenSet(z.string()),
  error_message: whenSet(z.string()),
  created_at: whenSet(z.string()).describe("local time YYYY-MM-DD HH:MM:SS"),
});
export type ModelRun = z.infer<typeof ModelRunSchema>;

export const ModelRunListSchema = z.looseObject({ total: int, items: listOf(ModelRunSchema) });
export type ModelRunList = z.infer<typeof ModelRunListSchema>;

export const ModelRunEventSchema = z.looseObject({
  event_type: runStatus.describe("created, reserved, gateway_submitted, ..., cancelled, failed"),
  run_status: whenSet(runStatus),
  settlement_status: whenSet(z.string()),
  amount: whenSet(decimal),
  error_message: whenSet(z.string()),
  created_at: whenSet(z.string()),
});
export type ModelRunEvent = z.infer<typeof ModelRunEventSchema>;

export const ModelRunEventsSchema = z.looseObject({ items: listOf(ModelRunEventSchema) });
export type ModelRunEvents = z.infer<typeof ModelRunEventsSchema>;

export const TERMINAL_MODEL_RUN_STATUSES = ["completed", "failed", "cancelled"] as const;
// docs/design/cloud-api.md#limits
/** page_size max 100 on this list. */
export const MODEL_RUN_MAX_PAGE_SIZE = 100;

export interface ModelRunInputs {
  model: string;
  prompt: string;
  generation_category?: string;
  first_frame?: unknown;
  last_frame?: unknown;
  images?: unknown[];
  videos?: unknown[];
  audios?: unknown[];
  duration?: number;
  resolution?: string;
  ratio?: string;
  contains_real_person_material?: boolean;
  [extra: string]: unknown;
}

export interface ModelRunSubmitParams {
  /** Required: the same API key plus the same key returns the same task. */
  idempotency_key: string;
  request_id?: string;
  inputs: ModelRunInputs;
}

export interface ModelRunListQuery {
  status?: string;
  page?: number;
  page_size?: number;
}

/** A submit's request: its inputs checked (labels normalised as they are sent) and its idempotency key. */
function submitRequest(params: ModelRunSubmitParams): Request {
  const checked = checkModelRunInputs(params.inputs);
  const issues = issuesOf(idempotencyKey(params.idempotency_key), checked.issues);
  return { issues, json: { ...params, inputs: checked.inputs } };
}

/** Every endpoint of the area, once. A submit is `keyed`: resent with its idempotency key, it replays. */
const ENDPOINTS = {
  submit: endpoint("POST /model-runs/videos", "keyed", ModelRunSchema, {
    action: (params: ModelRunSubmitParams) => `submit a ${params.inputs.model} model run`,
    checkAction: "submit a model run",
    request: submitRequest,
  }),
  list: endpoint("GET /model-runs/list", "read", ModelRunListSchema, {
    action: "list model runs",
    request: (query: ModelRunListQuery) => ({ query: { ...withRunStatus(query) } }),
    items: "items",
    maxPageSize: MODEL_RUN_MAX_PAGE_SIZE,
  }),
  cancel: endpoint("POST /model-runs/cancel", "idempotent", ModelRunSchema, {
    action: (run_id: string) => `cancel model run ${run_id}`,
    request: (run_id) => ({ json: { run_id } }),
  }),
  events: endpoint("GET /model-runs/events", "read", ModelRunEventsSchema, {
    action: (run_id: string) => `read events of model run ${run_id}`,
    request: (run_id) => ({ query: { run_id } }),
  }),
};

export class ModelRuns {
  constructor(private readonly transport: Transport) {}

  /** Checks inputs; returns them with labels normalised, or throws InputValidationError. */
  validateInputs(inputs: unknown): ModelRunInputs {
    const checked = checkModelRunInputs(inputs);
    if (checked.issues.length > 0) throw refusal(ENDPOINTS.submit, checked.issues);
    return checked.inputs as ModelRunInputs;
  }

  /** Submit a video task. Retried with the same idempotency_key, so a retry returns the same task. */
  submit(params: ModelRunSubmitParams, options: CallOptions = {}): Promise<ModelRun> {
    return send(this.transport, ENDPOINTS.submit, [params], options);
  }

  list(query: ModelRunListQuery = {}, options: CallOptions = {}): Promise<ModelRunList> {
    return send(this.transport, ENDPOINTS.list, [query], options);
  }

  listAll(filters: { status?: string } = {}, options: PaginateOptions = {}): AsyncIterable<ModelRun> {
    return walk(this.transport, ENDPOINTS.list, filters, options);
  }

  /** Cancel a run; a run that already completed comes back completed. Safe to repeat. */
  cancel(run_id: string, options: CallOptions = {}): Promise<ModelRun> {
    return send(this.transport, ENDPOINTS.cancel, [run_id], options);
  }

  events(run_id: string, options: CallOptions = {}): Promise<ModelRunEvents> {
    return send(this.transport, ENDPOINTS.events, [run_id], options);
  }

  /**
   * Finds one run by walking the list: the API shows no single-run detail endpoint.
   * NotFoundError when no page holds it.
   */
  async get(run_id: string, options: CallOptions = {}): Promise<ModelRun> {
    for await (const run of this.listAll({}, options)) {
      if (run.run_id === run_id) return run;
    }
    const { method, path } = ENDPOINTS.list;
    throw new NotFoundError({
      action: `read model run ${run_id}`,
      method,
      path,
      message: `Could not read model run ${run_id}: no page of ${path} holds it. Check the run_id; runs are scoped to the API key that submitted them.`,
    });
  }

  /** Poll until the run is completed, failed or cancelled; returns the run. */
  waitForRun(run_id: string, options: WaitOptions = {}): Promise<ModelRun> {
    return pollUntil(
      {
        description: `model run ${run_id} to finish (completed, failed or cancelled)`,
        action: `wait for model run ${run_id}`,
        method: ENDPOINTS.list.method,
        path: ENDPOINTS.list.path,
        poll: (call) => this.get(run_id, call),
        describeState: (r) => `status ${r.status}`,
        isDone: (r) => (TERMINAL_MODEL_RUN_STATUSES as readonly string[]).includes(r.status),
      },
      options,
    );
  }
}
