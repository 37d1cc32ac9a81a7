/**
 * The workflows room's store: the market of published workflows, runs with their idempotency, stages driven
 * by the clock, and their charges through the wallet; nothing of HTTP.
 */
import Decimal from "decimal.js";
import { notFound, paramError } from "../core/http/errors";
import type { KnownState } from "../core/state/schema";
import { dueByNow, earliestDue } from "../core/schedule";
import { chunk, type Chunks, SettledJson } from "../core/state/settled-json";
import { requireReservation, requireUser, StateProblem } from "../core/state/schema";
import { paginate, requireStorableInputs } from "../core/http/validation";
import { money, Wallet } from "../core/wallet";
import { AssetStore } from "../assets/store";
import { checkWorkflowInputs } from "./inputs";
import type { WorkflowDefinition, WorkflowRevision } from "./entries";
import { gpuModelOf, SEED_WORKFLOWS } from "./seed";
import type { LogEntry, RunRecord, RunStatus, WorkflowSnapshot } from "./state";

export type { RunStatus } from "./state";

/**
 * The run lifecycle as data (5 s queued, then 20 s running: docs/design/contracts.md#what-it-implements).
 * The outcome is decided at submit: a run fails when any string input contains FAILURE_MARKER (the
 * emulator's documented trigger; the API does not show failure causes:
 * docs/design/cloud-api.md#workflow-runs).
 */
export const RUN_STAGES: Record<"queued" | "running", { seconds: number; next: "running" | "outcome" }> = {
  queued: { seconds: 5, next: "running" },
  running: { seconds: 20, next: "outcome" },
};
export const FAILURE_MARKER = "FAIL";

export interface SubmitRequest {
  workflow_id: string;
  revision_id?: string;
  inputs?: Record<string, unknown>;
  idempotency_key: string;
  accept_external_cost_risk?: boolean;
}

export interface MarketQuery {
  page?: number;
  page_size?: number;
  sort?: string;
  keyword?: string;
  tag?: string;
}

export interface RunListQuery {
  workflow_id?: string;
  status?: RunStatus;
  page?: number;
  page_size?: number;
}

const OUTPUT_HOST = "https://outputs.gpucloud-emulator.invalid";
const MARKET_SORTS = new Set(["latest", "popular"]);
const ZERO = money(0);

export function isoUtc(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Spec submit rule 1: one run per user, workflow and idempotency key; a JSON tuple cannot collide. */
function idempotencyKeyOf(user: string, workflowId: string, idempotencyKey: string): string {
  return JSON.stringify([user, workflowId, idempotencyKey]);
}

export class WorkflowStore {
  private runs = new Map<string, RunRecord>();
  /** idempotencyKeyOf(...) to run_order_id. */
  private byIdempotencyKey = new Map<string, string>();
  /** A run without a pending step is settled and never changes again. */
  private readonly json = new SettledJson<RunRecord>((run) => run.due === null);

  constructor(
    private readonly wallet: Wallet,
    private readonly assets: AssetStore,
    private readonly nextId: (prefix: string) => string,
    private readonly workflows: readonly WorkflowDefinition[] = SEED_WORKFLOWS,
  ) {}

  marketList(user: string, query: MarketQuery) {
    // Spec names `latest`; public clients also send `popular`. Anything else is refused, not ignored.
    if (query.sort !== undefined && !MARKET_SORTS.has(query.sort)) {
      throw paramError("sort", `must be one of ${[...MARKET_SORTS].join(", ")}`);
    }
    const keyword = query.keyword?.trim().toLowerCase() ?? "";
    const tag = query.tag?.trim().toLowerCase() ?? "";
    const matching = this.visible(user)
      .filter(
        (w) =>
          keyword === "" ||
          [w.title, w.description, ...w.tags].some((t) => t.toLowerCase().includes(keyword)),
      )
      .filter((w) => tag === "" || w.tags.some((t) => t.toLowerCase() === tag))
      .sort(query.sort === "popular" ? (a, b) => this.byPopularity(a, b) : byLatest);
    const page = query.page ?? 1;
    const pageSize = query.page_size ?? 20;
    const items = paginate(matching, page, pageSize).map((w) => {
      const revision = this.revisionOf(w, w.current_revision_id);
      return {
        workflow_id: w.workflow_id,
        revision_id: revision.revision_id,
        title: w.title,
        description: w.description,
        cover_url: w.covers[0] ?? "",
        tags: [...w.tags],
        owner: { ...w.owner },
        quote_currency: "CNY",
        quote_amount: revision.quote_amount,
        may_incur_external_model_cost: w.may_incur_external_model_cost,
        updated_at: isoUtc(w.updated_at),
      };
    });
    return { items, total: matching.length, page, page_size: pageSize };
  }

  info(user: string, workflowId: string) {
    const workflow = this.workflow(user, workflowId);
    const revision = this.revisionOf(workflow, workflow.current_revision_id);
    return {
      workflow_id: workflow.workflow_id,
      revision_id: revision.revision_id,
      title: workflow.title,
      description: workflow.description,
      tags: [...workflow.tags],
      covers: [...workflow.covers],
      owner: { ...workflow.owner },
      quote_currency: "CNY",
      quote_amount: revision.quote_amount,
      gpu_model: gpuModelOf(revision),
      may_incur_external_model_cost: workflow.may_incur_external_model_cost,
      external_cost_notice: workflow.external_cost_notice,
      editable_parameter_manifest: structuredClone(revision.parameters),
      candidate_output_manifest: structuredClone(revision.outputs),
    };
  }

  /**
   * Everything before the pre-deduction is synchronous and the idempotency lookup comes before any
   * charge, so concurrent identical submits cannot both charge: the second sees the first's record.
   * The workflow is checked first: only a workflow the caller can see has runs to replay.
   */
  submit(user: string, request: SubmitRequest, now: number) {
    requireStorableInputs(request.inputs);
    const workflow = this.workflow(user, request.workflow_id);
    const idemKey = idempotencyKeyOf(user, workflow.workflow_id, request.idempotency_key);
    const existing = this.byIdempotencyKey.get(idemKey);
    if (existing) return { ...this.presentRun(this.runs.get(existing)!), idempotent_replay: true };

    const revisionId = request.revision_id ?? workflow.current_revision_id;
    const revision = workflow.revisions.find((r) => r.revision_id === revisionId);
    if (!revision) throw notFound("workflow revision", `${workflow.workflow_id}@${revisionId}`);
    if (workflow.may_incur_external_model_cost && request.accept_external_cost_risk !== true) {
      // Spec says only "send true"; refusing before any charge as a parameter error (code 1) is the emulator's choice.
      throw paramError(
        "accept_external_cost_risk",
        `must be true for ${workflow.workflow_id}, which may incur external model cost: ${workflow.external_cost_notice}`,
      );
    }
    const inputs = checkWorkflowInputs(request.inputs ?? {}, revision.parameters, this.assets, user, now);

    const runOrderId = this.nextId("wfr");
    const reservationId = this.wallet.reserve(user, revision.quote_amount, {
      kind: "workflow_run",
      resource_id: runOrderId,
    });
    const run: RunRecord = {
      run_order_id: runOrderId,
      owner: user,
      workflow_id: workflow.workflow_id,
      revision_id: revision.revision_id,
      idempotency_key: request.idempotency_key,
      quote_amount: revision.quote_amount,
      quote_currency: "CNY",
      reservation_id: reservationId,
      freeze_status: "frozen",
      submission_status: "submitted",
      run_status: "queued",
      settlement_status: "pending",
      task_id: this.nextId("task"),
      prompt_id: this.nextId("prompt"),
      billing_run_id: this.nextId("bill_run"),
      inputs,
      outputs: {},
      compute_cost: ZERO,
      external_model_cost: ZERO,
      total_cost: ZERO,
      final_amount: ZERO,
      released_amount: ZERO,
      error_code: "",
      error_message: "",
      created_at: now,
      updated_at: now,
      started_at: null,
      terminal_at: null,
      outcome: containsFailureMarker(inputs) ? "failed" : "succeeded",
      due: { status: RUN_STAGES.queued.next, at: now + RUN_STAGES.queued.seconds },
      logs: [log(now, "queued", "info", "run accepted and queued", 0)],
    };
    this.runs.set(runOrderId, run);
    this.byIdempotencyKey.set(idemKey, runOrderId);
    return { ...this.presentRun(run), idempotent_replay: false };
  }

  runInfo(user: string, runOrderId: string) {
    return this.presentRun(this.run(user, runOrderId));
  }

  runList(user: string, query: RunListQuery) {
    // Newest first; runs of the same second keep reverse submission order (the map keeps insertion order).
    const matching = [...this.runs.values()]
      .reverse()
      .filter((r) => r.owner === user)
      .filter((r) => query.workflow_id === undefined || r.workflow_id === query.workflow_id)
      .filter((r) => query.status === undefined || r.run_status === query.status)
      .sort((a, b) => b.created_at - a.created_at);
    const page = query.page ?? 1;
    const pageSize = query.page_size ?? 20;
    return {
      items: paginate(matching, page, pageSize).map((r) => this.presentRun(r)),
      total: matching.length,
      page,
      page_size: pageSize,
    };
  }

  /** Field-notes shape of /workflow/run/execution. */
  execution(user: string, runOrderId: string, now: number) {
    const run = this.run(user, runOrderId);
    const queued = run.run_status === "queued";
    const all = [...this.runs.values()];
    const ahead = all.slice(0, all.indexOf(run)).filter((r) => r.run_status === "queued").length;
    const failed = run.run_status === "failed";
    return {
      task_id: run.task_id,
      workflow_id: run.workflow_id,
      status: run.run_status,
      queue_info: {
        position: queued ? ahead + 1 : 0,
        estimated_wait_sec: queued && run.due ? Math.max(0, run.due.at - now) : 0,
      },
      progress_percent: progressOf(run, now),
      logs: run.logs.map((entry) => ({ ...entry, at: isoUtc(entry.at) })),
      actual_execution_duration_sec: run.started_at === null ? 0 : (run.terminal_at ?? now) - run.started_at,
      compute_cost: run.compute_cost,
      external_model_cost: run.external_model_cost,
      total_cost: run.total_cost,
      outputs: { ...run.outputs },
      error: failed
        ? {
            code: run.error_code,
            message: run.error_message,
            reason: run.error_message,
            detail: `node ksampler_1 stopped at ${isoUtc(run.terminal_at ?? now)}`,
            engine_code: run.error_code,
            status_code: 500,
          }
        : null,
      cancel_requested: false,
      created_at: isoUtc(run.created_at),
      started_at: run.started_at === null ? null : isoUtc(run.started_at),
      terminal_at: run.terminal_at === null ? null : isoUtc(run.terminal_at),
    };
  }

  nextDueAt(): number | undefined {
    return earliestDue(this.runs.values(), (run) => run.due);
  }

  runDue(now: number): void {
    for (const run of dueByNow(this.runs.values(), (r) => r.due, now)) this.step(run);
  }

  snapshot(): WorkflowSnapshot {
    return { runs: [...this.runs.values()].map((r) => structuredClone(r)) };
  }

  serializeState(): Chunks {
    return [chunk('{"runs":'), ...this.json.list(this.runs.values()), chunk("}")];
  }

  restore(snapshot: WorkflowSnapshot): void {
    this.runs = new Map(snapshot.runs.map((r) => [r.run_order_id, structuredClone(r)]));
    this.byIdempotencyKey = new Map(
      snapshot.runs.map((r) => [idempotencyKeyOf(r.owner, r.workflow_id, r.idempotency_key), r.run_order_id]),
    );
  }

  /** A run still to settle needs its owner, its pre-deduction and its revision (for the actual cost). */
  checkState(snapshot: WorkflowSnapshot, known: KnownState): void {
    snapshot.runs.forEach((run, index) => {
      const at = `runs[${index}]`;
      requireUser(known, `${at}.owner`, run.owner);
      if (run.due === null) return;
      requireReservation(known, `${at}.reservation_id`, run.reservation_id);
      const workflow = this.workflows.find((w) => w.workflow_id === run.workflow_id);
      if (!workflow?.revisions.some((r) => r.revision_id === run.revision_id)) {
        throw new StateProblem(
          `${at}.revision_id`,
          `workflow ${run.workflow_id} has no revision ${run.revision_id} in this emulator's catalogue (was the state saved with another --seed?)`,
        );
      }
    });
  }

  reset(): void {
    this.restore({ runs: [] });
  }

  private step(run: RunRecord): void {
    const at = run.due!.at;
    if (run.due!.status === "running") {
      run.run_status = "running";
      run.started_at = at;
      run.due = { status: RUN_STAGES.running.next, at: at + RUN_STAGES.running.seconds };
      run.logs.push(log(at, "started", "info", "execution started", 0, "load_checkpoint_1"));
    } else {
      this.finish(run, at);
    }
    run.updated_at = at;
  }

  /** Settles by actual consumption: compute for the running time, plus external model cost on success. */
  private finish(run: RunRecord, at: number): void {
    const revision = this.revisionOf(
      this.workflows.find((w) => w.workflow_id === run.workflow_id)!,
      run.revision_id,
    );
    const compute = new Decimal(revision.compute_rate_per_second).times(at - (run.started_at ?? at));
    const external = run.outcome === "succeeded" ? new Decimal(revision.external_model_cost) : new Decimal(0);
    const total = compute.plus(external);
    const { released } = this.wallet.settle(run.reservation_id, total);
    run.run_status = run.outcome;
    run.terminal_at = at;
    run.due = null;
    run.compute_cost = money(compute);
    run.external_model_cost = money(external);
    run.total_cost = money(total);
    run.final_amount = money(total);
    run.released_amount = released;
    run.freeze_status = "released";
    run.settlement_status = "settled";
    if (run.outcome === "succeeded") {
      run.outputs = Object.fromEntries(
        revision.outputs.map((o) => [
          o.name,
          `${OUTPUT_HOST}/${run.run_order_id}/${o.name}.${extensionOf(o.type)}`,
        ]),
      );
      run.logs.push(
        log(at, "succeeded", "info", "execution finished", 100, revision.outputs[0]?.node_id ?? ""),
      );
    } else {
      run.error_code = "EXECUTION_FAILED";
      run.error_message = `an input contains ${FAILURE_MARKER}, so the emulator failed this run`;
      run.logs.push(log(at, "failed", "error", run.error_message, 100, "ksampler_1"));
    }
  }

  private presentRun(run: RunRecord) {
    return {
      run_order_id: run.run_order_id,
      workflow_id: run.workflow_id,
      revision_id: run.revision_id,
      quote_amount: run.quote_amount,
      quote_currency: run.quote_currency,
      freeze_status: run.freeze_status,
      submission_status: run.submission_status,
      run_status: run.run_status,
      settlement_status: run.settlement_status,
      task_id: run.task_id,
      prompt_id: run.prompt_id,
      billing_run_id: run.billing_run_id,
      inputs: structuredClone(run.inputs),
      outputs: { ...run.outputs },
      compute_cost: run.compute_cost,
      external_model_cost: run.external_model_cost,
      total_cost: run.total_cost,
      final_amount: run.final_amount,
      released_amount: run.released_amount,
      error_code: run.error_code,
      error_message: run.error_message,
      created_at: isoUtc(run.created_at),
      updated_at: isoUtc(run.updated_at),
    };
  }

  /** Most runs first (the emulator's reading of `popular`), then the latest. */
  private byPopularity(a: WorkflowDefinition, b: WorkflowDefinition): number {
    return this.runCount(b.workflow_id) - this.runCount(a.workflow_id) || byLatest(a, b);
  }

  private runCount(workflowId: string): number {
    let count = 0;
    for (const run of this.runs.values()) if (run.workflow_id === workflowId) count += 1;
    return count;
  }

  private visible(user: string): WorkflowDefinition[] {
    return this.workflows.filter((w) => w.public || w.owner.user_id === user);
  }

  private workflow(user: string, workflowId: string): WorkflowDefinition {
    const found = this.visible(user).find((w) => w.workflow_id === workflowId);
    if (!found) throw notFound("workflow", workflowId);
    return found;
  }

  private revisionOf(workflow: WorkflowDefinition, revisionId: string): WorkflowRevision {
    return workflow.revisions.find((r) => r.revision_id === revisionId)!;
  }

  private run(user: string, runOrderId: string): RunRecord {
    const run = this.runs.get(runOrderId);
    if (!run || run.owner !== user) throw notFound("workflow run", runOrderId);
    return run;
  }
}

function log(
  at: number,
  event_type: string,
  level: LogEntry["level"],
  message: string,
  progress: number,
  node_id = "",
): LogEntry {
  return { at, event_type, level, message, node_id, progress_percent: progress };
}

function progressOf(run: RunRecord, now: number): number {
  if (run.run_status === "queued") return 0;
  if (run.run_status !== "running" || run.started_at === null) return 100;
  return Math.min(99, Math.floor(((now - run.started_at) / RUN_STAGES.running.seconds) * 100));
}

function containsFailureMarker(value: unknown): boolean {
  if (typeof value === "string") return value.includes(FAILURE_MARKER);
  if (value !== null && typeof value === "object") return Object.values(value).some(containsFailureMarker);
  return false;
}

function extensionOf(type: "image" | "video" | "audio"): string {
  if (type === "image") return "png";
  return type === "video" ? "mp4" : "mp3";
}

function byLatest(a: WorkflowDefinition, b: WorkflowDefinition): number {
  return b.updated_at - a.updated_at || a.workflow_id.localeCompare(b.workflow_id);
}
