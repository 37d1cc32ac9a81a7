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
import { pendingRecordOf, unresolvedError } from "./pending-record";
import type { RecoveryState } from "./state";

/** What a pending record's resolution reads of the inputs its state keeps. */
interface StoredInputs {
  title?: string;
  waitTimeoutSeconds?: number;
}

/**
 * refresh of a pending record: the instance it made (claimed, marked as its resource, never left with a
 * claim token when the resource has a title), or undefined when nothing was made; an error when that
 * cannot be told.
 */
export async function readPending(
  ctx: ProviderContext,
  memory: RecoveryState,
  id: string,
  olds: StoredInputs,
  stored: Record<string, unknown>,
): Promise<CloudInstance | undefined> {
  const record = pendingRecordOf(id, stored);
  const outcome = await memory.records.resolve(ctx, record, Date.now());
  if (outcome.kind === "unknown") throw unresolvedError(record, outcome);
  if (outcome.kind === "not-made") return undefined;
  await releaseClaim(ctx, outcome.instance.instance_uuid, olds.title);
  return memory.reads(ctx.api).info(outcome.instance.instance_uuid);
}

/**
 * Delete of a pending record: nothing when a Create of this process settled it; otherwise the instance
 * it made, if any, is destroyed (by `destroy`, which waits until it is gone); an error when that cannot
 * be told, so the record stays in state.
 */
export async function deletePending(
  ctx: ProviderContext,
  memory: RecoveryState,
  id: string,
  olds: StoredInputs,
  stored: Record<string, unknown>,
  destroy: (instanceUuid: string) => Promise<void>,
): Promise<void> {
  if (memory.records.settledByCreate(id)) return;
  const record = pendingRecordOf(id, stored);
  memory.records.forget(id);
  const deadline = Date.now() + (olds.waitTimeoutSeconds ?? 900) * 1000;
  const outcome = await memory.records.resolve(ctx, record, deadline);
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
