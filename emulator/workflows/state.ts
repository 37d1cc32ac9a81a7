import { z } from "zod";
import { choice, decimal, nonEmpty, seconds } from "../core/state-schema";

/** A workflow run as the store keeps it (and the state file holds it). */

export const RUN_STATUSES = ["queued", "running", "succeeded", "failed", "cancelled"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const logEntrySchema = z.object({
  at: seconds,
  event_type: z.string(),
  level: choice(["info", "error"]),
  message: z.string(),
  node_id: z.string(),
  progress_percent: z.number().min(0).max(100),
});
export type LogEntry = z.infer<typeof logEntrySchema>;

export const runRecordSchema = z.object({
  run_order_id: nonEmpty,
  owner: nonEmpty,
  workflow_id: nonEmpty,
  revision_id: nonEmpty,
  idempotency_key: nonEmpty,
  quote_amount: decimal,
  quote_currency: z.string(),
  reservation_id: nonEmpty,
  freeze_status: choice(["frozen", "released"]),
  submission_status: choice(["submitted"]),
  run_status: choice(RUN_STATUSES),
  settlement_status: choice(["pending", "settled"]),
  task_id: z.string(),
  prompt_id: z.string(),
  billing_run_id: z.string(),
  inputs: z.record(z.string(), z.unknown()),
  outputs: z.record(z.string(), z.string()),
  compute_cost: decimal,
  external_model_cost: decimal,
  total_cost: decimal,
  final_amount: decimal,
  released_amount: decimal,
  error_code: z.string(),
  error_message: z.string(),
  created_at: seconds,
  updated_at: seconds,
  started_at: seconds.nullable(),
  terminal_at: seconds.nullable(),
  outcome: choice(["succeeded", "failed"]),
  due: z.object({ status: choice(["running", "outcome"]), at: seconds }).nullable(),
  logs: z.array(logEntrySchema),
});
export type RunRecord = z.infer<typeof runRecordSchema>;

export const workflowsStateSchema = z.object({ runs: z.array(runRecordSchema) });
export type WorkflowSnapshot = z.infer<typeof workflowsStateSchema>;
