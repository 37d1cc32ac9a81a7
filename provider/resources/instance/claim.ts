/**
 * Claiming an untitled instance before adopting it, so that two claimers (two stacks resolving lost
 * creates of one spec, or two reconcilers of this process) never both take it: read it afresh, title it
 * with a token nobody else can write, wait until any claimer that read it untitled before our write has
 * written its own token, and read it again. The last writer's token stands, and only that claimer adopts.
 */
import { randomBytes } from "node:crypto";
import { NotFoundError, retryUntil, type Instance as CloudInstance } from "../../../sdk";
import type { ProviderContext } from "../../framework/context";
import { instanceReads } from "./reads";

const CLAIM_PREFIX = "gpucloud-claim-";

/** The title prefix of every claim a claimant makes: `gpucloud-claim-<its 8 hex>-`. */
export function claimPrefix(claimantId: string): string {
  return `${CLAIM_PREFIX}${claimantId}-`;
}

/** A title that only this claim writes (31 characters, within the cloud's 50). */
function claimToken(claimantId: string): string {
  return `${claimPrefix(claimantId)}${randomBytes(3).toString("hex")}`;
}

/** Whether a title is a claim token of any claimant (an instance half way through being claimed). */
export function isClaimToken(title: string | undefined): boolean {
  return title?.startsWith(CLAIM_PREFIX) ?? false;
}

export interface ClaimTiming {
  /** Every read and the write of the claim give up at this time (epoch ms). */
  deadline: number;
  /** How long the write of the token may keep trying: one request's time, no more (see below). */
  writeMs: number;
  /** How long to wait after the write before reading who won. */
  settleMs: number;
  pollIntervalMs: number;
}

/**
 * won: the claim stands (an instance already bearing one of this claimant's tokens, from a claim whose
 * answer was lost, is its too); lost: the instance is gone, or titled by someone else; untitled: our
 * write did not land, so nothing is decided and the claim may be tried again.
 */
export type ClaimResult = { kind: "won"; instance: CloudInstance } | { kind: "lost" } | { kind: "untitled" };

/** Claims `instanceUuid` for the claimant `claimantId`. */
export async function claim(
  ctx: ProviderContext,
  instanceUuid: string,
  claimantId: string,
  timing: ClaimTiming,
): Promise<ClaimResult> {
  const before = await readAfresh(ctx, instanceUuid, timing);
  if (before?.title?.startsWith(claimPrefix(claimantId))) return { kind: "won", instance: before };
  if (before === undefined || before.title) return { kind: "lost" };
  const token = claimToken(claimantId);
  // A write that kept retrying could land after another claimer confirmed its own claim and take the
  // instance from under it; bounded to one request's time, every write lands within settleMs. Whatever
  // the write answers, the read after the wait decides.
  await ctx.api.instances
    .updateTitle(instanceUuid, token, { deadline: Date.now() + timing.writeMs })
    .catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, timing.settleMs));
  const after = await readAfresh(ctx, instanceUuid, timing);
  if (after?.title === token) return { kind: "won", instance: after };
  return after !== undefined && !after.title ? { kind: "untitled" } : { kind: "lost" };
}

/** The instance as a walk or read started now shows it, through outages until the deadline; undefined when gone. */
async function readAfresh(
  ctx: ProviderContext,
  instanceUuid: string,
  timing: ClaimTiming,
): Promise<CloudInstance | undefined> {
  try {
    return await retryUntil(() => instanceReads(ctx.api).info(instanceUuid), {
      deadline: timing.deadline,
      pauseMs: timing.pollIntervalMs,
    });
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}
