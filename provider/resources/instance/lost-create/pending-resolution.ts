/**
 * Resolving the pending records of earlier runs (pending-record.ts) with the same reconciler as lost
 * answers: the record's window, the grace counted from when this process first sees a candidate, the
 * claim. A record is resolved only by its own resource, and never dropped unresolved:
 * - refresh (its Read): adopt the instance it made, or report that nothing was made (the next up creates it);
 * - up: Diff meets the record and registers it here; the Create that replaces it (the same resource: the
 *   same spec and the same title, its instance's mark) takes it and resolves it first. Resolved, the
 *   Delete of the old pending id that follows has nothing left to do; not resolved (the outcome still
 *   unknown, or the Create failed first), the record goes back, and that Delete, or the next run, resolves it;
 * - destroy (or a Delete whose record no Create resolved): destroy the instance it made, if any.
 * Ambiguity is never guessed away: the operation fails saying which instances could be it and what to
 * do, and the state keeps the record.
 */
import type { Instance as CloudInstance } from "../../../../sdk";
import type { ProviderContext } from "../../../framework/context";
import { specKey, type CreateSpec } from "../create-spec";
import type { InstanceInputs } from "../inputs";
import { instanceReads } from "../reads";
import { pendingRecordOf, recordWindow, unresolvedError, type PendingRecord } from "./pending-record";
import { reconcilerFor, type Outcome } from "./reconciler";
import { recoveryTiming } from "./timing";
import { inWindow } from "./window";

/** Records Diff met in this process that no Create holds, by id. */
const registered = new Map<string, PendingRecord>();
/** Records a Create of this process holds while it resolves them. */
const held = new Set<string>();
/** Records a Create of this process resolved: their Delete has nothing left to do. */
const resolvedByCreate = new Set<string>();
/** Resolutions under way or decided in this process, by record id, so each record is resolved once. */
const resolutions = new Map<string, Promise<Outcome>>();

/** Diff met a pending record: keep it for the Create that replaces it. */
export function registerRecord(id: string, stored: Record<string, unknown>): void {
  if (!resolvedByCreate.has(id) && !held.has(id)) registered.set(id, pendingRecordOf(id, stored));
}

const isOwn = (record: PendingRecord, spec: CreateSpec, mark: string | undefined) =>
  record.mark !== undefined && record.mark === mark && specKey(record.pending.spec) === specKey(spec);

/**
 * The registered record of the resource this create is for (the same spec, the same mark), now the
 * caller's to resolve: it reports back with `settled` or `returned`. Undefined when there is none.
 */
export function takeRecord(spec: CreateSpec, mark: string | undefined): PendingRecord | undefined {
  const record = [...registered.values()].find((r) => isOwn(r, spec, mark));
  if (record) {
    registered.delete(record.id);
    held.add(record.id);
  }
  return record;
}

/** The Create that took `record` settled it (adopted its instance, or found none): its Delete does nothing. */
export function recordSettled(record: PendingRecord): void {
  held.delete(record.id);
  resolvedByCreate.add(record.id);
}

/** The Create that took `record` could not settle it: it waits for its own Read or Delete, or the next run. */
export function recordReturned(record: PendingRecord): void {
  held.delete(record.id);
  registered.set(record.id, record);
}

/**
 * An instance adopted by adoptInstanceUuid settles its own resource's registered record (the same spec
 * and mark) when the record's window holds it.
 */
export function resolveByAdoption(spec: CreateSpec, mark: string | undefined, instance: CloudInstance): void {
  const record = [...registered.values()].find(
    (r) => isOwn(r, spec, mark) && inWindow(recordWindow(r.pending), instance, true),
  );
  if (!record) return;
  registered.delete(record.id);
  recordSettled(record);
  resolutions.set(record.id, Promise.resolve({ kind: "adopted", instance }));
}

/** The record's outcome, deciding it by `deadline` (epoch ms) unless this process already did. */
export function resolveRecord(
  ctx: ProviderContext,
  record: PendingRecord,
  deadline: number,
): Promise<Outcome> {
  let resolution = resolutions.get(record.id);
  if (!resolution) {
    const now = Date.now();
    // A record is written only once its call had settled (its give-up time is never sooner). Whatever
    // the deadline, a candidate first seen now gets its grace and its claim.
    resolution = reconcilerFor(ctx, record.pending.spec).settle({
      id: record.claimantId,
      window: recordWindow(record.pending),
      earlierRun: true,
      settledAt: now,
      giveUpAt: Math.max(deadline, now + resolutionMs(ctx)),
    });
    resolutions.set(record.id, resolution);
    // Undecided is not an answer to keep: a later operation of this process (a person may have titled
    // the foreign instance meanwhile) looks again.
    void resolution.then((outcome) => {
      if (outcome.kind === "unknown") resolutions.delete(record.id);
    });
  }
  return resolution;
}

/**
 * The least time the resolution of a record gets in a new process: a candidate's grace from when this
 * process first sees it, and a claim whose write lost its answer, with a few polls between.
 */
function resolutionMs(ctx: ProviderContext): number {
  const t = recoveryTiming(ctx.settings);
  const claimMs = 2 * t.requestMs + t.claimWriteMs + t.settledAfterSendMs + t.rivalsLandedMs;
  return t.graceMs + claimMs + 4 * t.roundMs;
}

/**
 * refresh of a pending record: the instance it made (claimed, marked as its resource, never left with a
 * claim token when the resource has a title), or undefined when nothing was made; an error when that
 * cannot be told.
 */
export async function readPending(
  ctx: ProviderContext,
  id: string,
  olds: Partial<InstanceInputs>,
  stored: Record<string, unknown>,
): Promise<CloudInstance | undefined> {
  const record = pendingRecordOf(id, stored);
  const outcome = await resolveRecord(ctx, record, Date.now());
  if (outcome.kind === "unknown") throw unresolvedError(record, outcome);
  if (outcome.kind === "not-made") return undefined;
  await releaseClaim(ctx, outcome.instance.instance_uuid, olds.title);
  return instanceReads(ctx.api).info(outcome.instance.instance_uuid);
}

/**
 * Delete of a pending record: nothing when a Create of this process settled it; otherwise the instance
 * it made, if any, is destroyed (by `destroy`, which waits until it is gone); an error when that cannot
 * be told, so the record stays in state.
 */
export async function deletePending(
  ctx: ProviderContext,
  id: string,
  olds: Partial<InstanceInputs>,
  stored: Record<string, unknown>,
  destroy: (instanceUuid: string) => Promise<void>,
): Promise<void> {
  if (resolvedByCreate.has(id)) return;
  const record = pendingRecordOf(id, stored);
  registered.delete(id);
  const deadline = Date.now() + (olds.waitTimeoutSeconds ?? 900) * 1000;
  const outcome = await resolveRecord(ctx, record, deadline);
  if (outcome.kind === "unknown") throw unresolvedError(record, outcome);
  if (outcome.kind === "adopted") await destroy(outcome.instance.instance_uuid);
}

/**
 * A claimed instance takes its resource's mark in place of the claim token. A record written before
 * resources had marks has no title: its token then stays, itself a mark no one else holds, and the next
 * `up` names the instance.
 */
export async function releaseClaim(
  ctx: ProviderContext,
  instanceUuid: string,
  mark: string | undefined,
): Promise<void> {
  if (mark !== undefined) await ctx.api.instances.updateTitle(instanceUuid, mark);
}
