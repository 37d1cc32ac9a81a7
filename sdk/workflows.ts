/** Workflows: the market, a workflow's detail and manifest, run submission, run records, execution. */
import { z } from "zod";
import { inputValidationError, type InputIssue } from "./errors";
import { paginate, type PaginateOptions } from "./pagination";
import type { CallOptions, Transport } from "./transport";
import { checkWorkflowInputs, idempotencyKeyIssues, requireString } from "./validation";
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

export class Workflows {
  constructor(private readonly transport: Transport) {}

  marketList(query: MarketQuery = {}, options: CallOptions = {}): Promise<MarketWorkflowList> {
    return this.transport.call(
      {
        method: "GET",
        path: "/workflow/market/list",
        query: { ...query },
        safety: "read",
        action: "list market workflows",
        schema: MarketWorkflowListSchema,
      },
      options,
    );
  }

  marketListAll(
    filters: Omit<MarketQuery, "page" | "page_size"> = {},
    options: PaginateOptions = {},
  ): AsyncIterable<MarketWorkflow> {
    return paginate(
      async (page, page_size) => {
        const res = await this.marketList({ ...filters, page, page_size }, options);
        return { items: res.items, total: res.total };
      },
      options,
      { action: "list market workflows", method: "GET", path: "/workflow/market/list" },
    );
  }

  info(workflow_id: string, options: CallOptions = {}): Promise<WorkflowDetail> {
    return this.transport.call(
      {
        method: "GET",
        path: "/workflow/market/info",
        query: { workflow_id },
        safety: "read",
        action: `read workflow ${workflow_id}`,
        schema: WorkflowDetailSchema,
      },
      options,
    );
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
    if (checked.issues.length > 0) {
      throw inputValidationError(
        {
          action: `submit a run of workflow ${detail.workflow_id}`,
          method: "POST",
          path: "/workflow/run/submit",
        },
        checked.issues,
      );
    }
    return checked.inputs;
  }

  /** Submit a run. Retried with the same idempotency_key, so a retry replays rather than duplicates. */
  async submit(params: SubmitParams, options: SubmitOptions = {}): Promise<SubmitResult> {
    const action = `submit a run of workflow ${params.workflow_id}`;
    const issues: InputIssue[] = [...idempotencyKeyIssues(params.idempotency_key)];
    requireString(issues, "workflow_id", params.workflow_id);
    let inputs = params.inputs;
    if (options.detail) {
      const checked = checkWorkflowInputs(options.detail.editable_parameter_manifest, inputs);
      issues.push(...checked.issues);
      inputs = checked.inputs;
      if (options.detail.may_incur_external_model_cost && params.accept_external_cost_risk !== true) {
        issues.push({
          field: "accept_external_cost_risk",
          reason: "must be true: this workflow may incur external model cost (see external_cost_notice)",
        });
      }
    }
    if (issues.length > 0)
      throw inputValidationError({ action, method: "POST", path: "/workflow/run/submit" }, issues);
    return this.transport.call(
      {
        method: "POST",
        path: "/workflow/run/submit",
        json: { ...params, inputs },
        safety: "keyed",
        action,
        schema: SubmitResultSchema,
      },
      options,
    );
  }

  runInfo(run_order_id: string, options: CallOptions = {}): Promise<RunOrder> {
    return this.transport.call(
      {
        method: "GET",
        path: "/workflow/run/info",
        query: { run_order_id },
        safety: "read",
        action: `read workflow run ${run_order_id}`,
        schema: RunOrderSchema,
      },
      options,
    );
  }

  runList(query: RunListQuery = {}, options: CallOptions = {}): Promise<RunList> {
    return this.transport.call(
      {
        method: "GET",
        path: "/workflow/run/list",
        query: { ...withRunStatus(query) },
        safety: "read",
        action: "list workflow runs",
        schema: RunListSchema,
      },
      options,
    );
  }

  runListAll(
    filters: { workflow_id?: string; status?: string } = {},
    options: PaginateOptions = {},
  ): AsyncIterable<RunListItem> {
    return paginate(
      async (page, page_size) => {
        const res = await this.runList({ ...filters, page, page_size }, options);
        return { items: res.items, total: res.total };
      },
      options,
      { action: "list workflow runs", method: "GET", path: "/workflow/run/list" },
    );
  }

  execution(run_order_id: string, options: CallOptions = {}): Promise<Execution> {
    return this.transport.call(
      {
        method: "GET",
        path: "/workflow/run/execution",
        query: { run_order_id },
        safety: "read",
        action: `read execution of workflow run ${run_order_id}`,
        schema: ExecutionSchema,
      },
      options,
    );
  }

  /** Poll run info until run_status is terminal (succeeded, failed, cancelled); returns the run. */
  waitForRun(run_order_id: string, options: WaitOptions = {}): Promise<RunOrder> {
    return pollUntil(
      {
        description: `workflow run ${run_order_id} to finish (succeeded, failed or cancelled)`,
        action: `wait for workflow run ${run_order_id}`,
        method: "GET",
        path: `/workflow/run/info?run_order_id=${run_order_id}`,
        poll: (call) => this.runInfo(run_order_id, call),
        describeState: (r) => `run_status ${r.run_status}`,
        isDone: (r) => (TERMINAL_RUN_STATUSES as readonly string[]).includes(r.run_status),
      },
      options,
    );
  }
}
