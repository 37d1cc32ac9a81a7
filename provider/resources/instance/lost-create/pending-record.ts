/**
 * The pending record: what the state keeps of a create whose outcome stayed unknown, so that the next
 * `pulumi up`, `refresh` or `destroy` resolves it before creating anything new (the state is the only
 * journal that outlives the provider process). Its id marks it (`pending-create:<t0>:<8 hex>`, never an
 * instance uuid) and its output `pendingCreate` holds the spec, the window in which an instance it made
 * was created (window.ts), why the outcome is unknown and the instances that could be it. Its inputs keep
 * the resource's title, the mark its instance will carry: only the Create of that same resource may take
 * the record over.
 */
import { z } from "zod";
import type { Instance as CloudInstance } from "../../../../sdk";
import { issueText } from "../../../framework/check";
import { ResourceInitError } from "../../../framework/errors";
import { CreateSpec, describeSpec, matchesSpec, type CreateSpec as Spec } from "../create-spec";
import type { Claimant } from "./reconciler";
import type { CreateWindow } from "./window";

const ID_PATTERN = /^pending-create:(\d+):([0-9a-f]{8})$/;

/** The output that holds the record; null for an instance. */
export const PENDING_OUTPUT = "pendingCreate";

const cloudSeconds = (what: string) => z.number().int().nullable().describe(`Cloud Unix seconds: ${what}`);

export const PendingCreate = z
  .object({
    spec: CreateSpec.describe("What the create asked the cloud for."),
    windowStart: cloudSeconds(
      "an instance it made was created at or after this (the newest create time listed before the call; null when none was).",
    ),
    windowEnd: cloudSeconds(
      "... and at or before this (the newest create time listed once the call had settled; null when no such listing was read).",
    ),
    listedBefore: z
      .array(z.string())
      .default([])
      .describe(
        "Instances of the spec created in the second windowStart and listed before the call: not its own.",
      ),
    listedAtEnd: z
      .array(z.string())
      .default([])
      .describe(
        "Instances created in the second windowEnd that the listing closing the window showed: only these of that second can be its own.",
      ),
    reason: z.string().describe("Why the outcome stayed unknown."),
    candidates: z
      .array(
        z.object({
          instanceUuid: z.string().describe("An unmarked instance of the spec listed in the window."),
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
  /** The title of the record's resource: its instance's mark, and how its own Create is known. */
  mark: string | undefined;
}

export function isPendingId(id: string): boolean {
  return ID_PATTERN.test(id);
}

function pendingId(claimant: Claimant): string {
  return `pending-create:${(claimant.window.start ?? 0) + 1}:${claimant.id}`;
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
  const mark = typeof stored.title === "string" ? stored.title : undefined;
  return { id, claimantId: match[2], pending: parsed.data, mark };
}

/** The record's window, as the reconciler reads it. */
export function recordWindow(pending: PendingCreate): CreateWindow {
  const closed = pending.windowEnd !== null;
  return {
    start: pending.windowStart ?? undefined,
    listedBefore: new Set(pending.listedBefore),
    closed,
    end: pending.windowEnd ?? undefined,
    listedAtEnd: new Set(pending.listedAtEnd),
  };
}

const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

function windowText(pending: PendingCreate): string {
  const from = pending.windowStart === null ? "any time" : iso(pending.windowStart);
  const to = pending.windowEnd === null ? "an end not yet known" : iso(pending.windowEnd);
  return `${describeSpec(pending.spec)}, created between ${from} and ${to}`;
}

/**
 * The window as the state keeps it: of the instances listed before the call, only those of the spec in
 * the window's first second matter later (older ones fall outside it by their create time), and of the
 * closing listing's last second, only those of the spec.
 */
function storedWindow(
  window: CreateWindow,
  spec: Spec,
  listed: readonly CloudInstance[],
): Pick<PendingCreate, "windowStart" | "windowEnd" | "listedBefore" | "listedAtEnd"> {
  const ofSpec = listed.filter((i) => matchesSpec(i, spec));
  return {
    windowStart: window.start ?? null,
    windowEnd: window.closed ? (window.end ?? window.start ?? null) : null,
    listedBefore: ofSpec
      .filter(
        (i) => window.listedBefore.has(i.instance_uuid) && (i.create_time ?? window.start) === window.start,
      )
      .map((i) => i.instance_uuid),
    listedAtEnd: window.closed
      ? ofSpec.filter((i) => window.listedAtEnd.has(i.instance_uuid)).map((i) => i.instance_uuid)
      : [],
  };
}

/**
 * The create's failure when its outcome stayed unknown: ErrorResourceInitFailed with the pending id,
 * so the state records it instead of forgetting an instance that may bill. Of the instances the last
 * listing showed (`outcome.listed`), the window keeps what a later run needs.
 */
export function pendingCreateError<I>(
  inputs: I,
  spec: Spec,
  claimant: Claimant,
  outcome: {
    reason: string;
    candidates: CloudInstance[];
    window: CreateWindow;
    listed: readonly CloudInstance[];
  },
): ResourceInitError<I> {
  const pending: PendingCreate = {
    spec,
    ...storedWindow(outcome.window, spec, outcome.listed),
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
      "The stack keeps the record. Title or destroy an instance that is not this stack's, then run `pulumi refresh` again; " +
      "or set adoptInstanceUuid to the right one and run `pulumi up`.",
  );
}
