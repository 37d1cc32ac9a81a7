/** Workflows: the market, a workflow's detail and manifest, run submission, run records, execution. */
import { z } from "zod";
import { endpoint, pathOf, refusal, send, walk, type Request } from "./endpoints";
import type { PaginateOptions } from "./pagination";
import type { CallOptions, Transport } from "./transport";
import { checkWorkflowInputs, idempotencyKey, issuesOf, required, rule } from "./validation";
import { pollUntil, type WaitOptions } from "./waiters";
import { decimal, int, listOf, runStatus, whenSet, withRunStatus } from "./zod-helpers";

export const OptionSchema = z.looseObject({
  label: whenSet(z.string()),
  value: z.union([z.string(), z.number(), z.boolean()]),
});

export const UiSchemaSchema = z.looseObject({
  control: whenSet(z.string()).describe("select or input"),
  options_source: whenSet(z.string()),
  options: whenSet(z.array(OptionSchema)),
});

export const ManifestEntrySchema = z.looseObject({
  name: z.string().describe("the key to use in inputs"),
  display_name: whenSet(z.string()),
  description: whenSet(z.string()),
  value_type: z.string(),
  required: whenSet(z.boolean()),
  default_value: z.unknown().optional().describe("null is a value of its own here"),
  ui_schema: UiSchemaSchema.nullable().optional(),
  bindings: whenSet(z.array(z.unknown())).describe("internal; never sent in inputs"),
  sort_order: whenSet(int),
});
export type ManifestEntry = z.infer<typeof ManifestEntrySchema>;

export const OutputEntrySchema = z.looseObject({
  name: z.string(),
  type: whenSet(z.string()),
  description: whenSet(z.string()),
  node_id: whenSet(z.string()),
  output_key: whenSet(z.string()),
  file_index: whenSet(int),
  history_count: whenSet(int),
  sort_order: whenSet(int),
});
export type OutputEntry = z.infer<typeof OutputEntrySchema>;

const OwnerSchema = z.looseObject({ user_id: whenSet(z.string()), display_name: whenSet(z.string()) });

export const WorkflowDetailSchema = z.looseObject({
  workflow_id: z.string(),
  revision_id: z.string(),
  title: whenSet(z.string()),
  description: whenSet(z.string()),
  tags: whenSet(z.array(z.unknown())),
  covers: whenSet(z.array(z.unknown())),
  owner: whenSet(OwnerSchema),
  quote_currency: whenSet(z.string()),
  quote_amount: whenSet(decimal),
  gpu_model: whenSet(z.string()),
  may_incur_external_model_cost: whenSet(z.boolean()),
  external_cost_notice: whenSet(z.string()),
  editable_parameter_manifest: listOf(ManifestEntrySchema),
  candidate_output_manifest: listOf(OutputEntrySchema).optional(),
});
export type WorkflowDetail = z.infer<typeof WorkflowDetailSchema>;

// Fields of a market list item: docs/design/live-service-notes.md#workflow-runs
export const MarketWorkflowSchema = z.looseObject({
  workflow_id: z.string(),
  revision_id: whenSet(z.string()),
  title: whenSet(z.string()),
  description: whenSet(z.string()),
  cover_url: whenSet(z.string()),
  tags: whenSet(z.array(z.unknown())),
  owner: whenSet(OwnerSchema),
  quote_currency: whenSet(z.string()),
  quote_amount: whenSet(decimal),
  may_incur_external_model_cost: whenSet(z.boolean()),
  updated_at: whenSet(z.union([z.string(), z.number()])),
});
export type MarketWorkflow = z.infer<typeof MarketWorkflowSchema>;

export const MarketWorkflowListSchema = z.looseObject({
  items: listOf(MarketWorkflowSchema),
  total: whenSet(int),
  page: whenSet(int),
  page_size: whenSet(int),
});
export type MarketWorkflowList = z.infer<typeof MarketWorkflowListSchema>;

export const SubmitResultSchema = z.looseObject({
  run_order_id: z.string(),
  workflow_id: whenSet(z.string()),
  revision_id: whenSet(z.string()),
  quote_currency: whenSet(z.string()),
  quote_amount: whenSet(decimal),
  freeze_status: whenSet(z.string()),
  run_status: whenSet(runStatus),
  task_id: whenSet(z.string()),
  prompt_id: whenSet(z.string()),
  billing_run_id: whenSet(z.string()),
  idempotent_replay: whenSet(z.boolean()),
});
export type SubmitResult = z.infer<typeof SubmitResultSchema>;

export const RunOrderSchema = z.looseObject({
  run_order_id: z.string(),
  workflow_id: whenSet(z.string()),
  revision_id: whenSet(z.string()),
  quote_amount: whenSet(decimal),
  quote_currency: whenSet(z.string()),
  freeze_status: whenSet(z.string()),
  submission_status: whenSet(z.string()),
  run_status: runStatus.describe("queued, running, succeeded, failed, cancelled"),
  settlement_status: whenSet(z.string()),
  task_id: whenSet(z.string()),
  prompt_id: whenSet(z.string()),
  inputs: z.record(z.string(), z.unknown()).nullable().optional(),
  outputs: z.record(z.string(), z.unknown()).nullable().optional(),
  compute_cost: whenSet(decimal),
  external_model_cost: whenSet(decimal),
  total_cost: whenSet(decimal),
  final_amount: whenSet(decimal),
  released_amount: whenSet(decimal),
  error_code: whenSet(z.string()),
  error_message: whenSet(z.string()),
  created_at: whenSet(z.string()),
  updated_at: whenSet(z.string()),
});
export type RunOrder = z.infer<typeof RunOrderSchema>;

// Run list items are not shown (docs/design/cloud-api.md#workflow-runs); they are read as run orders with only
// the id required.
export const RunListItemSchema = RunOrderSchema.extend({ run_status: whenSet(runStatus) });
export type RunListItem = z.infer<typeof RunListItemSchema>;

export const RunListSchema = z.looseObject({
  items: listOf(RunListItemSchema),
  total: whenSet(int),
  page: whenSet(int),
  page_size: whenSet(int),
});
export type RunList = z.infer<typeof RunListSchema>;

// The execution endpoint: docs/design/live-service-notes.md#workflow-runs
export const ExecutionSchema = z.looseObject({
  task_id: whenSet(z.string()),
  workflow_id: whenSet(z.string()),
  status: whenSet(runStatus),
  queue_info: z
    .looseObject({ position: whenSet(z.number()), estimated_wait_sec: whenSet(z.number()) })
    .nullable()
    .optional(),
  progress_percent: whenSet(z.number()),
  logs: z
    .array(
      z.looseObject({
        at: whenSet(z.string()),
        event_type: whenSet(z.string()),
        level: whenSet(z.string()),
        message: whenSet(z.string()),
        node_id: whenSet(z.string()),
        progress_percent: whenSet(z.number()),
      }),
    )
    .nullable()
    .optional(),
  actual_execution_duration_sec: z.number().nullable().optional(),
  compute_cost: whenSet(decimal),
  external_model_cost: whenSet(decimal),
  total_cost: whenSet(decimal),
  outputs: z.record(z.string(), z.unknown()).nullable().optional(),
  error: z.looseObject({}).nullable().optional(),
  cancel_requested: whenSet(z.boolean()),
  created_at: z.string().nullable().optional(),
  started_at: z.string().nullable().optional(),
  terminal_at: z.string().nullable().optional(),
});
export type Execution = z.infer<typeof ExecutionSchema>;

export const TERMINAL_RUN_STATUSES = ["succeeded", "failed", "cancelled"] as const;

export interface MarketQuery {
  page?: number;
  page_size?: number;
  sort?: string;
  keyword?: string;
  tag?: string;
}

export interface RunListQuery {
  workflow_id?: string;
  status?: string;
  page?: number;
  page_size?: number;
}

export interface SubmitParams {
  workflow_id: string;
  revision_id?: string;
  inputs?: Record<string, unknown>;
  /** Required: unique per business call; a retry reuses it and replays the same run. */
  idempotency_key: string;
  accept_external_cost_risk?: boolean;
}

export interface SubmitOptions extends CallOptions {
  /** When given, inputs are checked against its manifest before sending (see validateInputs). */
  detail?: WorkflowDetail;
}

/**
 * A submit's request: its inputs checked against the workflow's manifest when the detail is given (labels
 * normalised as they are sent), and the external-cost consent that detail may require.
 */
function submitRequest(params: SubmitParams, detail: WorkflowDetail | undefined): Request {
  const checked = detail && checkWorkflowInputs(detail.editable_parameter_manifest, params.inputs);
  const consented = !detail?.may_incur_external_model_cost || params.accept_external_cost_risk === true;
  const issues = issuesOf(
    idempotencyKey(params.idempotency_key),
    required("workflow_id", params.workflow_id),
    checked?.issues,
    rule("accept_external_cost_risk", consented, EXTERNAL_COST_CONSENT),
  );
  return { issues, json: { ...params, inputs: checked ? checked.inputs : params.inputs } };
}

const EXTERNAL_COST_CONSENT =
  "must be true: this workflow may incur external model cost (see external_cost_notice)";

/** Every endpoint of the area, once. A submit is `keyed`: resent with its idempotency key, it replays. */
const ENDPOINTS = {
  marketList: endpoint("GET /workflow/market/list", "read", MarketWorkflowListSchema, {
    action: "list market workflows",
    request: (query: MarketQuery) => ({ query: { ...query } }),
    items: "items",
  }),
  info: endpoint("GET /workflow/market/info", "read", WorkflowDetailSchema, {
    action: (workflow_id: string) => `read workflow ${workflow_id}`,
    request: (workflow_id) => ({ query: { workflow_id } }),
  }),
  submit: endpoint("POST /workflow/run/submit", "keyed", SubmitResultSchema, {
    action: (params: SubmitParams, _detail?: WorkflowDetail) => submitAction(params.workflow_id),
    request: submitRequest,
  }),
  runInfo: endpoint("GET /workflow/run/info", "read", RunOrderSchema, {
    action: (run_order_id: string) => `read workflow run ${run_order_id}`,
    request: (run_order_id) => ({ query: { run_order_id } }),
  }),
  runList: endpoint("GET /workflow/run/list", "read", RunListSchema, {
    action: "list workflow runs",
    request: (query: RunListQuery) => ({ query: { ...withRunStatus(query) } }),
    items: "items",
  }),
  execution: endpoint("GET /workflow/run/execution", "read", ExecutionSchema, {
    action: (run_order_id: string) => `read execution of workflow run ${run_order_id}`,
    request: (run_order_id) => ({ query: { run_order_id } }),
  }),
};

function submitAction(workflow_id: string): string {
  return `submit a run of workflow ${workflow_id}`;
}

export class Workflows {
  constructor(private readonly transport: Transport) {}

  marketList(query: MarketQuery = {}, options: CallOptions = {}): Promise<MarketWorkflowList> {
    return send(this.transport, ENDPOINTS.marketList, [query], options);
  }

  marketListAll(
    filters: Omit<MarketQuery, "page" | "page_size"> = {},
    options: PaginateOptions = {},
  ): AsyncIterable<MarketWorkflow> {
    return walk(this.transport, ENDPOINTS.marketList, filters, options);
  }

  info(workflow_id: string, options: CallOptions = {}): Promise<WorkflowDetail> {
    return send(this.transport, ENDPOINTS.info, [workflow_id], options);
  }

  /**
   * Checks inputs against the workflow's manifest; returns them with labels normalised, or throws
   * InputValidationError naming every bad input.
   */
  validateInputs(
    detail: WorkflowDetail,
    inputs: Record<string, unknown> | undefined,
  ): Record<string, unknown> {
    const checked = checkWorkflowInputs(detail.editable_parameter_manifest, inputs);
    if (checked.issues.length > 0)
      throw refusal(ENDPOINTS.submit, checked.issues, submitAction(detail.workflow_id));
    return checked.inputs;
  }

  /** Submit a run. Retried with the same idempotency_key, so a retry replays rather than duplicates. */
  submit(params: SubmitParams, options: SubmitOptions = {}): Promise<SubmitResult> {
    return send(this.transport, ENDPOINTS.submit, [params, options.detail], options);
  }

  runInfo(run_order_id: string, options: CallOptions = {}): Promise<RunOrder> {
    return send(this.transport, ENDPOINTS.runInfo, [run_order_id], options);
  }

  runList(query: RunListQuery = {}, options: CallOptions = {}): Promise<RunList> {
    return send(this.transport, ENDPOINTS.runList, [query], options);
  }

  runListAll(
    filters: { workflow_id?: string; status?: string } = {},
    options: PaginateOptions = {},
  ): AsyncIterable<RunListItem> {
    return walk(this.transport, ENDPOINTS.runList, filters, options);
  }

  execution(run_order_id: string, options: CallOptions = {}): Promise<Execution> {
    return send(this.transport, ENDPOINTS.execution, [run_order_id], options);
  }

  /** Poll run info until run_status is terminal (succeeded, failed, cancelled); returns the run. */
  waitForRun(run_order_id: string, options: WaitOptions = {}): Promise<RunOrder> {
    return pollUntil(
      {
        description: `workflow run ${run_order_id} to finish (succeeded, failed or cancelled)`,
        action: `wait for workflow run ${run_order_id}`,
        method: ENDPOINTS.runInfo.method,
        path: pathOf(ENDPOINTS.runInfo, [run_order_id]),
        poll: (call) => this.runInfo(run_order_id, call),
        describeState: (r) => `run_status ${r.run_status}`,
        isDone: (r) => (TERMINAL_RUN_STATUSES as readonly string[]).includes(r.run_status),
      },
      options,
    );
  }
}
