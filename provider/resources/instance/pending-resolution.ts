/**
 * Resolving the pending records of earlier runs (pending-record.ts) with the same reconciler as lost
 * answers: no listing taken before, the record's window, the quiet rule with the cloud's clock counting,
 * the count rule over every record of the spec this process resolves.
 * - refresh (read): adopt the one candidate, or report that nothing was made (the next up creates it);
 * - up: Diff meets the record and registers it here; the Create that replaces it (or any create of the
 *   same spec: the instances are interchangeable) takes it and resolves it first; the Delete of the old
 *   pending id that follows has nothing left to do;
 * - destroy (or a Delete nobody's Create took): destroy the instance it made, if any.
 * Ambiguity is never guessed away: the operation fails saying which instances could be it and what to do.
 */
import type { Instance as CloudInstance } from "../../../sdk";
import type { ProviderContext } from "../../framework/context";
import { specKey, type CreateSpec } from "./create-spec";
import type { InstanceInputs } from "./inputs";
import { pendingRecordOf, unresolvedError, type PendingRecord } from "./pending-record";
import { instanceReads } from "./reads";
import { createTiming, reconcilerFor, type Outcome } from "./reconciler";

/** Records Diff met in this process, not yet taken by a Create, by id. */
const registered = new Map<string, PendingRecord>();
/** Records a Create of this process took: their Delete is a no-op. */
const takenByCreate = new Set<string>();
/** Resolutions under way or decided in this process, by record id, so each record is resolved once. */
const resolutions = new Map<string, Promise<Outcome>>();

/** Diff met a pending record: keep it for the Create that replaces it. */
export function registerRecord(id: string, stored: Record<string, unknown>): void {
  if (!takenByCreate.has(id)) registered.set(id, pendingRecordOf(id, stored));
}

/** A registered record of this spec, now the caller's to resolve (undefined when there is none). */
export function takeRecord(spec: CreateSpec): PendingRecord | undefined {
  const key = specKey(spec);
  const record = [...registered.values()].find((r) => specKey(r.pending.spec) === key);
  if (record) {
    registered.delete(record.id);
    takenByCreate.add(record.id);
  }
  return record;
}

/** An instance adopted by adoptInstanceUuid resolves a registered record of its spec whose window holds it. */
export function resolveByAdoption(spec: CreateSpec, instance: CloudInstance): void {
  const key = specKey(spec);
  const created = instance.create_time;
  const record = [...registered.values()].find(
    (r) =>
      specKey(r.pending.spec) === key &&
      created !== undefined &&
      created >= r.pending.windowStart &&
      created <= r.pending.windowEnd,
  );
  if (!record) return;
  registered.delete(record.id);
  takenByCreate.add(record.id);
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
    const timing = createTiming(ctx.settings);
    const { windowStart, windowEnd } = record.pending;
    const now = Date.now();
    const cloudNow = ctx.api.cloudNow() ?? now;
    // The record was written once the settle time after the lost answer had passed; wait out what is
    // left of it on the cloud's clock (at most settleMs: a stopped emulator clock never gets there).
    const settleLeft = Math.min(timing.settleMs, Math.max(0, windowEnd * 1000 + timing.settleMs - cloudNow));
    resolution = reconcilerFor(ctx, record.pending.spec).settle({
      id: record.claimantId,
      windowStart,
      windowEnd,
      listedBefore: new Set(),
      earlierRun: true,
      notMadeAfter: now + settleLeft,
      giveUpAt: Math.max(deadline, now + settleLeft),
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
 * How long a refresh may take to resolve a record: the settle time, two quiet times (a candidate seen
 * for the first time, and one that appears at the end) and a claim, with a few polls between.
 */
export function readDeadline(ctx: ProviderContext, olds: Partial<InstanceInputs>): number {
  const t = createTiming(ctx.settings);
  const budget = t.settleMs + 2 * t.quietMs + t.claimSettleMs + 4 * t.pollIntervalMs;
  return Date.now() + Math.min(budget, (olds.waitTimeoutSeconds ?? 900) * 1000);
}

/**
 * refresh of a pending record: the instance it made (claimed, titled as the program declares, never
 * left with a claim token), or undefined when nothing was made; an error when that cannot be told.
 */
export async function readPending(
  ctx: ProviderContext,
  id: string,
  olds: Partial<InstanceInputs>,
  stored: Record<string, unknown>,
): Promise<CloudInstance | undefined> {
  const record = pendingRecordOf(id, stored);
  const outcome = await resolveRecord(ctx, record, readDeadline(ctx, olds));
  if (outcome.kind === "unknown") throw unresolvedError(record, outcome);
  if (outcome.kind === "not-made") return undefined;
  await releaseClaim(ctx, outcome.instance.instance_uuid, olds.title);
  return instanceReads(ctx.api).info(outcome.instance.instance_uuid);
}

/**
 * Delete of a pending record: nothing when a Create of this process took it; otherwise the instance it
 * made, if any, is destroyed (by `destroy`, which waits until it is gone); an error when that cannot be
 * told, so the record stays in state.
 */
export async function deletePending(
  ctx: ProviderContext,
  id: string,
  olds: Partial<InstanceInputs>,
  stored: Record<string, unknown>,
  destroy: (instanceUuid: string) => Promise<void>,
): Promise<void> {
  if (takenByCreate.has(id)) return;
  const record = pendingRecordOf(id, stored);
  registered.delete(id);
  const deadline = Date.now() + (olds.waitTimeoutSeconds ?? 900) * 1000;
  const outcome = await resolveRecord(ctx, record, deadline);
  if (outcome.kind === "unknown") throw unresolvedError(record, outcome);
  if (outcome.kind === "adopted") await destroy(outcome.instance.instance_uuid);
}

/** A claimed instance loses its claim token: it takes the declared title, or none when none is declared. */
export async function releaseClaim(
  ctx: ProviderContext,
  instanceUuid: string,
  title: string | undefined,
): Promise<void> {
  await ctx.api.instances.updateTitle(instanceUuid, title ?? "");
}
