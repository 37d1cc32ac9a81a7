/**
 * The model-runs room's state schema: an external model run, with its events, as the store keeps it and the
 * state file holds it.
 */
import { z } from "zod";
import { choice, decimal, nonEmpty, seconds, storedInputs, text } from "../core/state/schema";
import { MAX_IDEMPOTENCY_KEY_CHARACTERS } from "../core/http/validation";

export const MODEL_RUN_STATUSES = [
  "created",
  "queued",
  "running",
  "completed",
  "failed",
  "cancelled",
] as const;
export type ModelRunStatus = (typeof MODEL_RUN_STATUSES)[number];
const SETTLEMENT_STATUSES = ["pending", "settled", "released"] as const;
const EVENT_TYPES = [
  "created",
  "reserved",
  "gateway_submitted",
  "gateway_refreshed",
  "settled",
  "released",
  "cancelled",
  "failed",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const modelRunEventSchema = z.strictObject({
  seq: z.int().min(0),
  event_type: choice(EVENT_TYPES),
  run_status: choice(MODEL_RUN_STATUSES),
  settlement_status: choice(SETTLEMENT_STATUSES),
  amount: decimal,
  error_message: text,
  at: seconds,
});
export type ModelRunEvent = z.infer<typeof modelRunEventSchema>;

export const modelRunRecordSchema = z.strictObject({
  run_id: nonEmpty,
  /**
   * sha256 of the API key that created the run: the scope of list, cancel and events
   * (docs/design/cloud-api.md#model-runs).
   */
  key_scope: nonEmpty,
  user: nonEmpty,
  idempotency_key: nonEmpty.max(MAX_IDEMPOTENCY_KEY_CHARACTERS),
  request_id: text,
  endpoint: text,
  model: nonEmpty,
  provider: text,
  gateway_task_id: text,
  status: choice(MODEL_RUN_STATUSES),
  settlement_status: choice(SETTLEMENT_STATUSES),
  reservation_id: nonEmpty,
  frozen_amount: decimal,
  settled_amount: decimal,
  released_amount: decimal,
  error_code: text,
  error_message: text,
  inputs: storedInputs,
  outcome: choice(["completed", "failed"]),
  due: z.strictObject({ status: choice(["running", "outcome"]), at: seconds }).nullable(),
  created_at: seconds,
  updated_at: seconds,
  events: z.array(modelRunEventSchema),
});
export type ModelRunRecord = z.infer<typeof modelRunRecordSchema>;

export const modelRunsStateSchema = z.strictObject({
  runs: z.array(modelRunRecordSchema),
  seq: z.int().min(0),
});
export type ModelRunSnapshot = z.infer<typeof modelRunsStateSchema>;
