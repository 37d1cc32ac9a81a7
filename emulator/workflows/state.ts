/**
 * The workflows room's state schema: a workflow run, with its log, as the store keeps it and the state file
 * holds it.
 */
import { z } from "zod";
import { choice, decimal, nonEmpty, seconds, storedInputs, text } from "../core/state/schema";
import { MAX_IDEMPOTENCY_KEY_CHARACTERS } from "../core/http/validation";

export const RUN_STATUSES = ["queued", "running", "succeeded", "failed", "cancelled"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const logEntrySchema = z.strictObject({
  at: seconds,
  event_type: text,
  level: choice(["info", "error"]),
  message: text,
  node_id: text,
  progress_percent: z.number().min(0).max(100),
});
export type LogEntry = z.infer<typeof logEntrySchema>;

export const runRecordSchema = z.strictObject({
  run_order_id: nonEmpty,
  owner: nonEmpty,
  workflow_id: nonEmpty,
  revision_id: nonEmpty,
  idempotency_key: nonEmpty.max(MAX_IDEMPOTENCY_KEY_CHARACTERS),
  quote_amount: decimal,
  quote_currency: text,
  reservation_id: nonEmpty,
  freeze_status: choice(["frozen", "released"]),
  submission_status: choice(["submitted"]),
  run_status: choice(RUN_STATUSES),
  settlement_status: choice(["pending", "settled"]),
  task_id: text,
  prompt_id: text,
  billing_run_id: text,
  inputs: storedInputs,
  outputs: z.record(text, text),
  compute_cost: decimal,
  external_model_cost: decimal,
  total_cost: decimal,
  final_amount: decimal,
  released_amount: decimal,
  error_code: text,
  error_message: text,
  created_at: seconds,
  updated_at: seconds,
  started_at: seconds.nullable(),
  terminal_at: seconds.nullable(),
  outcome: choice(["succeeded", "failed"]),
  due: z.strictObject({ status: choice(["running", "outcome"]), at: seconds }).nullable(),
  logs: z.array(logEntrySchema),
});
export type RunRecord = z.infer<typeof runRecordSchema>;

export const workflowsStateSchema = z.strictObject({ runs: z.array(runRecordSchema) });
export type WorkflowSnapshot = z.infer<typeof workflowsStateSchema>;
