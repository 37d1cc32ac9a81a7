/**
 * The model-runs room's store: video tasks, their idempotency, stages driven by the clock, and their
 * pre-deduction and settlement through the wallet; nothing of HTTP.
 */
import Decimal from "decimal.js";
import { notFound, paramError } from "../core/http/errors";
import type { KnownState } from "../core/state/schema";
import { dueByNow, earliestDue } from "../core/schedule";
import { chunk, type Chunks, SettledJson } from "../core/state/settled-json";
import { requireReservation, requireUser } from "../core/state/schema";
import { paginate, requireStorableInputs } from "../core/http/validation";
import { money, Wallet } from "../core/wallet";
import {
  checkMediaValue,
  LabelBook,
  MediaContext,
  MediaInputProblem,
  MediaValue,
} from "../assets/media-inputs";
import { MediaType } from "../assets/media-types";
import { AssetStore } from "../assets/store";
import { GENERATION_CATEGORIES, GenerationCategory, VIDEO_MODELS, VideoModel } from "./models";
import type { EventType, ModelRunRecord, ModelRunSnapshot, ModelRunStatus } from "./state";

export { MODEL_RUN_STATUSES, type ModelRunStatus } from "./state";

/**
 * The run lifecycle as data (5 s queued, then 30 s running: docs/design/contracts.md#what-it-implements).
 * The outcome is decided at submit: a prompt containing FAILURE_MARKER makes the gateway report a
 * failure (the emulator's documented trigger; the API does not show failure causes:
 * docs/design/cloud-api.md#model-runs).
 */
export const MODEL_RUN_STAGES: Record<
  "queued" | "running",
  { seconds: number; next: "running" | "outcome" }
> = {
  queued: { seconds: 5, next: "running" },
  running: { seconds: 30, next: "outcome" },
};
export const FAILURE_MARKER = "FAIL";

export interface VideoSubmit {
  idempotency_key: string;
  request_id?: string;
  inputs: Record<string, unknown>;
}

const KNOWN_INPUTS = new Set([
  "model",
  "prompt",
  "generation_category",
  "first_frame",
  "last_frame",
  "images",
  "videos",
  "audios",
  "duration",
  "resolution",
  "ratio",
  "contains_real_person_material",
]);
const REFERENCE_LISTS: Record<"images" | "videos" | "audios", MediaType> = {
  images: "image",
  videos: "video",
  audios: "audio",
};

/**
 * `YYYY-MM-DD HH:MM:SS`: a model run's created_at is in local time (docs/design/cloud-api.md#units-and-formats); the
 * emulator's local time is UTC.
 */
export function localTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 19).replace("T", " ");
}

/** Spec: the same API key plus the same idempotency key returns the same task; a JSON tuple cannot collide. */
function idempotencyKeyOf(keyScope: string, idempotencyKey: string): string {
  return JSON.stringify([keyScope, idempotencyKey]);
}

export class ModelRunStore {
  private runs = new Map<string, ModelRunRecord>();
  /** idempotencyKeyOf(...) to run_id. */
  private byIdempotencyKey = new Map<string, string>();
  /** A run without a pending step is completed, failed or cancelled, and never changes again. */
  private readonly json = new SettledJson<ModelRunRecord>((run) => run.due === null);
  private seq = 0;

  constructor(
    private readonly wallet: Wallet,
    private readonly assets: AssetStore,
    private readonly nextId: (prefix: string) => string,
    private readonly models: readonly VideoModel[] = VIDEO_MODELS,
  ) {}

  /** Synchronous from the idempotency lookup to the pre-deduction, so concurrent twins cannot both charge. */
  submit(keyScope: string, user: string, request: VideoSubmit, now: number) {
    requireStorableInputs(request.inputs);
    const idemKey = idempotencyKeyOf(keyScope, request.idempotency_key);
    const existing = this.byIdempotencyKey.get(idemKey);
    if (existing) return { ...this.present(this.runs.get(existing)!), idempotent_replay: true };

    const { model, inputs, price } = this.checkInputs(request.inputs, user, now);
    const runId = this.nextId("mrun");
    const reservationId = this.wallet.reserve(user, price, { kind: "model_run", resource_id: runId });
    const run: ModelRunRecord = {
      run_id: runId,
      key_scope: keyScope,
      user,
      idempotency_key: request.idempotency_key,
      request_id: request.request_id ?? request.idempotency_key,
      endpoint: model.endpoint,
      model: model.model,
      provider: model.provider,
      gateway_task_id: this.nextId("gw"),
      status: "created",
      settlement_status: "pending",
      reservation_id: reservationId,
      frozen_amount: money(price),
      settled_amount: money(0),
      released_amount: money(0),
      error_code: "",
      error_message: "",
      inputs,
      outcome: String(inputs.prompt).includes(FAILURE_MARKER) ? "failed" : "completed",
      due: { status: MODEL_RUN_STAGES.queued.next, at: now + MODEL_RUN_STAGES.queued.seconds },
      created_at: now,
      updated_at: now,
      events: [],
    };
    this.record(run, "created", now, money(0));
    this.record(run, "reserved", now, run.frozen_amount);
    run.status = "queued";
    this.runs.set(runId, run);
    this.byIdempotencyKey.set(idemKey, runId);
    return { ...this.present(run), idempotent_replay: false };
  }

  list(keyScope: string, query: { status?: ModelRunStatus; page?: number; page_size?: number }) {
    // Newest first; runs of the same second keep reverse submission order (the map keeps insertion order).
    const matching = [...this.runs.values()]
      .reverse()
      .filter((r) => r.key_scope === keyScope)
      .filter((r) => query.status === undefined || r.status === query.status)
      .sort((a, b) => b.created_at - a.created_at);
    return {
      total: matching.length,
      items: paginate(matching, query.page ?? 1, query.page_size ?? 20).map((r) => this.present(r)),
    };
  }

  /**
   * Spec race rule: before completion the run is cancelled and its pre-deduction released; once
   * completed it stays completed and settled. A failed or cancelled run is returned as it is.
   */
  cancel(keyScope: string, runId: string, now: number) {
    const run = this.run(keyScope, runId);
    if (run.status === "created" || run.status === "queued" || run.status === "running") {
      run.status = "cancelled";
      run.due = null;
      run.error_code = "user_cancelled";
      run.error_message = "cancelled by the user before completion";
      run.settlement_status = "released";
      run.released_amount = this.wallet.release(run.reservation_id);
      run.updated_at = now;
      this.record(run, "cancelled", now, money(0), run.error_message);
      this.record(run, "released", now, run.released_amount);
    }
    return this.present(run);
  }

  events(keyScope: string, runId: string) {
    const run = this.run(keyScope, runId);
    const items = [...run.events]
      .sort((a, b) => a.at - b.at || a.seq - b.seq)
      .map((e) => ({
        event_type: e.event_type,
        run_status: e.run_status,
        settlement_status: e.settlement_status,
        amount: e.amount,
        error_message: e.error_message,
        created_at: localTime(e.at),
      }));
    return { items };
  }

  nextDueAt(): number | undefined {
    return earliestDue(this.runs.values(), (run) => run.due);
  }

  runDue(now: number): void {
    for (const run of dueByNow(this.runs.values(), (r) => r.due, now)) this.step(run);
  }

  snapshot(): ModelRunSnapshot {
    return { runs: [...this.runs.values()].map((r) => structuredClone(r)), seq: this.seq };
  }

  serializeState(): Chunks {
    return [chunk('{"runs":'), ...this.json.list(this.runs.values()), chunk(`,"seq":${this.seq}}`)];
  }

  restore(snapshot: ModelRunSnapshot): void {
    this.runs = new Map(snapshot.runs.map((r) => [r.run_id, structuredClone(r)]));
    this.byIdempotencyKey = new Map(
      snapshot.runs.map((r) => [idempotencyKeyOf(r.key_scope, r.idempotency_key), r.run_id]),
    );
    this.seq = snapshot.seq;
  }

  /** A run still to settle or release needs its user and its pre-deduction. */
  checkState(snapshot: ModelRunSnapshot, known: KnownState): void {
    snapshot.runs.forEach((run, index) => {
      requireUser(known, `runs[${index}].user`, run.user);
      if (run.settlement_status === "pending") {
        requireReservation(known, `runs[${index}].reservation_id`, run.reservation_id);
      }
    });
  }

  reset(): void {
    this.restore({ runs: [], seq: 0 });
  }

  private step(run: ModelRunRecord): void {
    const at = run.due!.at;
    run.updated_at = at;
    if (run.due!.status === "running") {
      run.status = "running";
      run.due = { status: MODEL_RUN_STAGES.running.next, at: at + MODEL_RUN_STAGES.running.seconds };
      this.record(run, "gateway_submitted", at, money(0));
      return;
    }
    run.due = null;
    run.status = run.outcome;
    this.record(run, "gateway_refreshed", at, money(0));
    if (run.outcome === "completed") {
      // The gateway bills the requested seconds at the model's rate: the real cost equals the pre-deduction.
      const { released } = this.wallet.settle(run.reservation_id, run.frozen_amount);
      run.settlement_status = "settled";
      run.settled_amount = run.frozen_amount;
      run.released_amount = released;
      this.record(run, "settled", at, run.settled_amount);
      if (new Decimal(released).greaterThan(0)) this.record(run, "released", at, released);
    } else {
      run.error_code = "generation_failed";
      run.error_message = `the gateway reported a failure: the prompt contains ${FAILURE_MARKER}`;
      this.record(run, "failed", at, money(0), run.error_message);
      run.released_amount = this.wallet.release(run.reservation_id);
      run.settlement_status = "released";
      this.record(run, "released", at, run.released_amount);
    }
  }

  private record(run: ModelRunRecord, type: EventType, at: number, amount: string, errorMessage = ""): void {
    this.seq += 1;
    run.events.push({
      seq: this.seq,
      event_type: type,
      run_status: run.status,
      settlement_status: run.settlement_status,
      amount,
      error_message: errorMessage,
      at,
    });
  }

  private checkInputs(raw: Record<string, unknown>, user: string, now: number) {
    for (const name of Object.keys(raw)) {
      // Spec lists the accepted inputs; an unknown name is refused so a typo does not pass silently.
      if (!KNOWN_INPUTS.has(name))
        throw paramError(`inputs.${name}`, `is not a known input (known: ${[...KNOWN_INPUTS].join(", ")})`);
    }
    const modelName = requireString(raw, "model");
    const prompt = requireString(raw, "prompt");
    const model = this.models.find((m) => m.model === modelName);
    if (!model)
      throw paramError(
        "inputs.model",
        `unknown video model ${modelName} (known: ${this.models.map((m) => m.model).join(", ")})`,
      );

    const category =
      optional(raw, "generation_category", "a string", (v): v is string => typeof v === "string") ??
      "text_to_video";
    if (!(GENERATION_CATEGORIES as readonly string[]).includes(category)) {
      throw paramError("inputs.generation_category", `must be one of ${GENERATION_CATEGORIES.join(", ")}`);
    }
    if (!model.generation_categories.includes(category as GenerationCategory)) {
      throw paramError(
        "inputs.generation_category",
        `${model.model} supports ${model.generation_categories.join(", ")}`,
      );
    }
    const duration =
      optional(raw, "duration", "an integer", (v): v is number => Number.isInteger(v)) ??
      model.default_duration;
    if (duration < model.min_duration || duration > model.max_duration) {
      throw paramError(
        "inputs.duration",
        `must be from ${model.min_duration} to ${model.max_duration} seconds for ${model.model}`,
      );
    }
    const resolution =
      optional(raw, "resolution", "a string", (v): v is string => typeof v === "string") ??
      model.default_resolution;
    // An own property only: a resolution named "constructor" is no price.
    const rate = Object.hasOwn(model.price_per_second, resolution)
      ? model.price_per_second[resolution]
      : undefined;
    if (rate === undefined) {
      throw paramError(
        "inputs.resolution",
        `must be one of ${Object.keys(model.price_per_second).join(", ")} for ${model.model}`,
      );
    }
    const ratio = optional(raw, "ratio", "a string", (v): v is string => typeof v === "string");
    if (ratio !== undefined && !model.ratios.includes(ratio)) {
      throw paramError("inputs.ratio", `must be one of ${model.ratios.join(", ")} for ${model.model}`);
    }
    optional(raw, "contains_real_person_material", "a boolean", (v): v is boolean => typeof v === "boolean");

    const media: MediaContext = { assets: this.assets, owner: user, now, labels: new LabelBook() };
    const inputs: Record<string, unknown> = {
      ...raw,
      model: model.model,
      prompt,
      generation_category: category,
      duration,
      resolution,
    };
    const needsFirst = category === "first_frame_to_video" || category === "first_last_frame_to_video";
    const needsLast = category === "first_last_frame_to_video";
    // Labels bind to resources in request order, so media is checked in the order sent
    // (docs/design/cloud-api.md#media-inputs-and-labels).
    for (const name of Object.keys(raw)) {
      if (name === "first_frame" || name === "last_frame") {
        inputs[name] = checkMedia(`inputs.${name}`, raw[name], "image", media);
      } else if (name === "images" || name === "videos" || name === "audios") {
        const list = raw[name];
        if (!Array.isArray(list)) throw paramError(`inputs.${name}`, "must be an array of resources");
        inputs[name] = list.map((item, i) =>
          checkMedia(`inputs.${name}[${i}]`, item, REFERENCE_LISTS[name], media),
        );
      }
    }
    if (needsFirst && raw.first_frame === undefined)
      throw paramError("inputs.first_frame", `is required for ${category}`);
    if (needsLast && raw.last_frame === undefined)
      throw paramError("inputs.last_frame", `is required for ${category}`);
    return { model, inputs, price: new Decimal(rate).times(duration) };
  }

  private present(run: ModelRunRecord) {
    return {
      run_id: run.run_id,
      request_id: run.request_id,
      endpoint: run.endpoint,
      model: run.model,
      provider: run.provider,
      gateway_task_id: run.gateway_task_id,
      status: run.status,
      settlement_status: run.settlement_status,
      frozen_amount: run.frozen_amount,
      settled_amount: run.settled_amount,
      released_amount: run.released_amount,
      error_code: run.error_code,
      error_message: run.error_message,
      inputs: structuredClone(run.inputs),
      created_at: localTime(run.created_at),
      updated_at: localTime(run.updated_at),
    };
  }

  private run(keyScope: string, runId: string): ModelRunRecord {
    const run = this.runs.get(runId);
    // Another key's run looks missing, like another user's resource (CONTRACTS: ownership).
    if (!run || run.key_scope !== keyScope) throw notFound("model run", runId);
    return run;
  }
}

function requireString(raw: Record<string, unknown>, name: string): string {
  const value = raw[name];
  if (value === undefined) throw paramError(`inputs.${name}`, "is required");
  if (typeof value !== "string" || value.trim() === "")
    throw paramError(`inputs.${name}`, "must be a non-empty string");
  return value;
}

function optional<T>(
  raw: Record<string, unknown>,
  name: string,
  what: string,
  test: (v: unknown) => v is T,
): T | undefined {
  const value = raw[name];
  if (value === undefined) return undefined;
  if (!test(value)) throw paramError(`inputs.${name}`, `must be ${what}`);
  return value;
}

function checkMedia(field: string, value: unknown, expected: MediaType, media: MediaContext): MediaValue {
  try {
    return checkMediaValue(value, expected, media);
  } catch (problem) {
    if (problem instanceof MediaInputProblem) throw paramError(field, problem.message);
    throw problem;
  }
}
