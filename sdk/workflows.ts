/** Workflows: the market, a workflow's detail and manifest, run submission, run records, execution. */
import { z } from "zod";
import { inputValidationError, type InputIssue } from "./errors";
import { paginate, type PaginateOptions } from "./pagination";
import type { CallOptions, Transport } from "./transport";
import { checkWorkflowInputs, idempotencyKeyIssues, requireString } from "./validation";
import { pollUntil, type WaitOptions } from "./waiters";
import { decimal, int, listOf, runStatus, withRunStatus } from "./zod-helpers";

export const OptionSchema = z.looseObject({
  label: z.string().optional(),
  value: z.union([z.string(), z.number(), z.boolean()]),
});

export const UiSchemaSchema = z.looseObject({
  control: z.string().optional().describe("select or input"),
  options_source: z.string().optional(),
  options: z.array(OptionSchema).optional(),
});

export const ManifestEntrySchema = z.looseObject({
  name: z.string().describe("the key to use in inputs"),
  display_name: z.string().optional(),
  description: z.string().optional(),
  value_type: z.string(),
  required: z.boolean().optional(),
  default_value: z.unknown().optional(),
  ui_schema: UiSchemaSchema.nullable().optional(),
  bindings: z.array(z.unknown()).optional().describe("internal; never sent in inputs"),
  sort_order: int.optional(),
});
export type ManifestEntry = z.infer<typeof ManifestEntrySchema>;

export const OutputEntrySchema = z.looseObject({
  name: z.string(),
  type: z.string().optional(),
  description: z.string().optional(),
  node_id: z.string().optional(),
  output_key: z.string().optional(),
  file_index: int.optional(),
  history_count: int.optional(),
  sort_order: int.optional(),
});
export type OutputEntry = z.infer<typeof OutputEntrySchema>;

const OwnerSchema = z.looseObject({ user_id: z.string().optional(), display_name: z.string().optional() });

export const WorkflowDetailSchema = z.looseObject({
  workflow_id: z.string(),
  revision_id: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  tags: z.array(z.unknown()).optional(),
  covers: z.array(z.unknown()).optional(),
  owner: OwnerSchema.optional(),
  quote_currency: z.string().optional(),
  quote_amount: decimal.optional(),
  gpu_model: z.string().optional(),
  may_incur_external_model_cost: z.boolean().optional(),
  external_cost_notice: z.string().optional(),
  editable_parameter_manifest: listOf(ManifestEntrySchema),
  candidate_output_manifest: listOf(OutputEntrySchema).optional(),
});
export type WorkflowDetail = z.infer<typeof WorkflowDetailSchema>;

// Fields of a market list item: docs/design/live-service-notes.md#workflow-runs
export const MarketWorkflowSchema = z.looseObject({
  workflow_id: z.string(),
  revision_id: z.string().optional(),
  title: z.string().optional(),
  description: z.string().optional(),
  cover_url: z.string().optional(),
  tags: z.array(z.unknown()).optional(),
  owner: OwnerSchema.optional(),
  quote_currency: z.string().optional(),
  quote_amount: decimal.optional(),
  may_incur_external_model_cost: z.boolean().optional(),
  updated_at: z.union([z.string(), z.number()]).optional(),
});
export type MarketWorkflow = z.infer<typeof MarketWorkflowSchema>;

export const MarketWorkflowListSchema = z.looseObject({
  items: listOf(MarketWorkflowSchema),
  total: int.optional(),
  page: int.optional(),
  page_size: int.optional(),
});
export type MarketWorkflowList = z.infer<typeof MarketWorkflowListSchema>;

export const SubmitResultSchema = z.looseObject({
  run_order_id: z.string(),
  workflow_id: z.string().optional(),
  revision_id: z.string().optional(),
  quote_currency: z.string().optional(),
  quote_amount: decimal.optional(),
  freeze_status: z.string().optional(),
  run_status: runStatus.optional(),
  task_id: z.string().optional(),
  prompt_id: z.string().optional(),
  billing_run_id: z.string().optional(),
  idempotent_replay: z.boolean().optional(),
});
export type SubmitResult = z.infer<typeof SubmitResultSchema>;

export const RunOrderSchema = z.looseObject({
  run_order_id: z.string(),
  workflow_id: z.string().optional(),
  revision_id: z.string().optional(),
  quote_amount: decimal.optional(),
  quote_currency: z.string().optional(),
  freeze_status: z.string().optional(),
  submission_status: z.string().optional(),
  run_status: runStatus.describe("queued, running, succeeded, failed, cancelled"),
  settlement_status: z.string().optional(),
  task_id: z.string().optional(),
  prompt_id: z.string().optional(),
  inputs: z.record(z.string(), z.unknown()).nullable().optional(),
  outputs: z.record(z.string(), z.unknown()).nullable().optional(),
  compute_cost: decimal.optional(),
  external_model_cost: decimal.optional(),
  total_cost: decimal.optional(),
  final_amount: decimal.optional(),
  released_amount: decimal.optional(),
  error_code: z.string().optional(),
  error_message: z.string().optional(),
  created_at: z.string().optional(),
  updated_at: z.string().optional(),
});
export type RunOrder = z.infer<typeof RunOrderSchema>;

// Run list items are not shown (docs/design/cloud-api.md#workflow-runs); they are read as run orders with only
// the id required.
export const RunListItemSchema = RunOrderSchema.partial().extend({ run_order_id: z.string() });
export type RunListItem = z.infer<typeof RunListItemSchema>;

export const RunListSchema = z.looseObject({
  items: listOf(RunListItemSchema),
  total: int.optional(),
  page: int.optional(),
  page_size: int.optional(),
});
export type RunList = z.infer<typeof RunListSchema>;

// The execution endpoint: docs/design/live-service-notes.md#workflow-runs
export const ExecutionSchema = z.looseObject({
  task_id: z.string().optional(),
  workflow_id: z.string().optional(),
  status: runStatus.optional(),
  queue_info: z
    .looseObject({ position: z.number().optional(), estimated_wait_sec: z.number().optional() })
    .nullable()
    .optional(),
  progress_percent: z.number().optional(),
  logs: z
    .array(
      z.looseObject({
        at: z.string().optional(),
        event_type: z.string().optional(),
        level: z.string().optional(),
        message: z.string().optional(),
        node_id: z.string().optional(),
        progress_percent: z.number().optional(),
      }),
    )
    .nullable()
    .optional(),
  actual_execution_duration_sec: z.number().nullable().optional(),
  compute_cost: decimal.optional(),
  external_model_cost: decimal.optional(),
  total_cost: decimal.optional(),
  outputs: z.record(z.string(), z.unknown()).nullable().optional(),
  error: z.looseObject({}).nullable().optional(),
  cancel_requested: z.boolean().optional(),
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
    return paginate(async (page, page_size) => {
      const res = await this.marketList({ ...filters, page, page_size }, options);
      return { items: res.items, total: res.total };
    }, options);
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
    return paginate(async (page, page_size) => {
      const res = await this.runList({ ...filters, page, page_size }, options);
      return { items: res.items, total: res.total };
    }, options);
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
