/**
 * The pending record: what the state keeps of a create whose outcome stayed unknown, so that the next
 * `pulumi up`, `refresh` or `destroy` resolves it before creating anything new (the state is the only
 * journal that outlives the provider process). Its id marks it (`pending-create:<t0>:<8 hex>`, never an
 * instance uuid) and its output `pendingCreate` holds the spec, the window in which an instance it made
 * was created, why the outcome is unknown and the instances that could be it.
 */
import { z } from "zod";
import type { Instance as CloudInstance } from "../../../sdk";
import { issueText } from "../../framework/check";
import { ResourceInitError } from "../../framework/errors";
import { CreateSpec, describeSpec } from "./create-spec";
import type { InstanceInputs } from "./inputs";
import type { Claimant } from "./reconciler";

const ID_PATTERN = /^pending-create:(\d+):([0-9a-f]{8})$/;

/** The output that holds the record; null for an instance. */
export const PENDING_OUTPUT = "pendingCreate";

export const PendingCreate = z
  .object({
    spec: CreateSpec,
    windowStart: z
      .number()
      .int()
      .describe("Cloud Unix seconds: an instance it made was created at or after this."),
    windowEnd: z.number().int().describe("Cloud Unix seconds: ... and at or before this."),
    reason: z.string().describe("Why the outcome stayed unknown."),
    candidates: z
      .array(
        z.object({
          instanceUuid: z.string().describe("An untitled instance of the spec listed in the window."),
          createTime: z.number().int().nullable().describe("When it was created, Unix seconds."),
        }),
      )
      .describe("The instances that could be the one it made, when it was given up."),
  })
  .meta({
    id: "PendingCreate",
    description:
      "A create whose answer was lost and whose outcome stayed unknown; the next up, refresh or destroy resolves it.",
  });
export type PendingCreate = z.infer<typeof PendingCreate>;

export interface PendingRecord {
  id: string;
  /** The 8 hex of the id: the claimant that sent the create, whose claim tokens carry it. */
  claimantId: string;
  pending: PendingCreate;
}

export function isPendingId(id: string): boolean {
  return ID_PATTERN.test(id);
}

function pendingId(claimant: Claimant): string {
  return `pending-create:${claimant.windowStart + 1}:${claimant.id}`;
}

/** Why a stored pendingCreate is not a record, in words. */
function unreadable(value: unknown, error: z.ZodError | undefined): string {
  if (value === undefined || value === null) return `${PENDING_OUTPUT} is missing`;
  return (error?.issues ?? []).map((issue) => issueText(issue, PENDING_OUTPUT)).join("; ");
}

/** The record a state holds under a pending id; a record that is not one is an error naming the output. */
export function pendingRecordOf(id: string, stored: Record<string, unknown>): PendingRecord {
  const match = ID_PATTERN.exec(id);
  const parsed = PendingCreate.safeParse(stored[PENDING_OUTPUT]);
  if (!match || !parsed.success) {
    throw new Error(
      `Could not resolve the pending create ${id}: the state holds no readable ${PENDING_OUTPUT} output for it ` +
        `(${!match ? "the id is malformed" : unreadable(stored[PENDING_OUTPUT], parsed.error)}). ` +
        "List your instances, adopt the right one with adoptInstanceUuid, and remove this resource from the state with `pulumi state delete`.",
    );
  }
  return { id, claimantId: match[2], pending: parsed.data };
}

const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

function windowText(pending: PendingCreate): string {
  return `${describeSpec(pending.spec)}, created between ${iso(pending.windowStart)} and ${iso(pending.windowEnd)}`;
}

/**
 * The create's failure when its outcome stayed unknown: ErrorResourceInitFailed with the pending id,
 * so the state records it instead of forgetting an instance that may bill.
 */
export function pendingCreateError(
  inputs: InstanceInputs,
  spec: CreateSpec,
  claimant: Claimant,
  windowEnd: number,
  outcome: { reason: string; candidates: CloudInstance[] },
): ResourceInitError<InstanceInputs> {
  const pending: PendingCreate = {
    spec,
    windowStart: claimant.windowStart,
    windowEnd,
    reason: outcome.reason,
    candidates: outcome.candidates.map((c) => ({
      instanceUuid: c.instance_uuid,
      createTime: c.create_time ?? null,
    })),
  };
  const id = pendingId(claimant);
  return new ResourceInitError(
    `Could not create instance: the answer to the create call was lost and whether it made an instance is still unknown: ${outcome.reason}. ` +
      `The stack now records a pending create (${id}) for ${windowText(pending)}. ` +
      "The next `pulumi up`, `pulumi refresh` or `pulumi destroy` resolves it: it adopts the instance that appeared, or concludes that none did, before creating anything new.",
    { id, state: { inputs, outputs: { [PENDING_OUTPUT]: pending } }, reasons: [outcome.reason] },
  );
}

/** Why a pending record could not be resolved, and what a person does about it. */
export function unresolvedError(
  record: PendingRecord,
  outcome: { reason: string; candidates: CloudInstance[] },
): Error {
  const listed =
    outcome.candidates.length === 0
      ? "none is listed now"
      : outcome.candidates
          .map(
            (c) =>
              `${c.instance_uuid} (created ${c.create_time === undefined ? "at an unknown time" : iso(c.create_time)}, title ${JSON.stringify(c.title ?? "")})`,
          )
          .join(", ");
  return new Error(
    `Could not resolve the pending create ${record.id} (${windowText(record.pending)}): ${outcome.reason}. ` +
      `Instances that could be the one it made: ${listed}. ` +
      "Title or destroy the instance that is not this stack's, then run `pulumi refresh` again; " +
      "or set adoptInstanceUuid to the right one and run `pulumi up`.",
  );
}
