/**
 * Claiming an unmarked instance before adopting it, so that two claimers (two stacks resolving lost
 * creates of one spec, two reconcilers of this process, or a creator whose mark came too late) never
 * both take it: read it, title it with a token nobody else can write, wait until every rival that read
 * it unmarked before our token landed has had its own write land (timing.ts: rivalsLandedMs), and read
 * it again. The last writer's token stands, and only that claimer adopts. The title is never unmarked
 * again once a token lands (no claimer and no creator of this provider writes an empty title), so a
 * rival that reads after that sees a token and stays away.
 */
import { randomBytes } from "node:crypto";
import { NotFoundError, retryUntil, sleep, type Instance as CloudInstance } from "../../../../sdk";
import type { ProviderContext } from "../../../framework/context";
import type { RecoveryTiming } from "./timing";

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

export function newClaimantId(): string {
  return randomBytes(4).toString("hex");
}

/**
 * won: the claim stands; lost: the instance is gone, or titled by someone else; untitled: our write did
 * not land, so nothing is decided and the claim may be tried again.
 */
export type ClaimResult = { kind: "won"; instance: CloudInstance } | { kind: "lost" } | { kind: "untitled" };

/**
 * Claims `instanceUuid` for the claimant `claimantId`. Reads give up at `deadline` (epoch ms); the waits
 * for rivals never do: cut short, they would decide before a rival's write could land.
 */
export async function claim(
  ctx: ProviderContext,
  instanceUuid: string,
  claimantId: string,
  timing: RecoveryTiming,
  deadline: number,
): Promise<ClaimResult> {
  const before = await readNow(ctx, instanceUuid, timing, deadline);
  if (before?.title?.startsWith(claimPrefix(claimantId))) {
    // Ours from an earlier attempt (a lost answer, an earlier run): it stands once any rival's has landed.
    await sleep(timing.rivalsLandedMs);
    return decided(await readNow(ctx, instanceUuid, timing, deadline), before.title);
  }
  if (before === undefined || before.title) return { kind: "lost" };
  const token = claimToken(claimantId);
  const landedBy = await writeToken(ctx, instanceUuid, token, timing);
  await sleep(landedBy + timing.rivalsLandedMs - Date.now());
  return decided(await readNow(ctx, instanceUuid, timing, deadline), token);
}

function decided(after: CloudInstance | undefined, token: string): ClaimResult {
  if (after?.title === token) return { kind: "won", instance: after };
  return after !== undefined && !after.title ? { kind: "untitled" } : { kind: "lost" };
}

/**
 * Writes the token, every attempt sent within claimWriteMs (a write that kept trying could land after a
 * rival confirmed its own claim). Returns by when it has landed if it ever does (epoch ms): its answer,
 * or, when the answer never came, the last send plus the time a lost call may still be carried out.
 */
async function writeToken(
  ctx: ProviderContext,
  instanceUuid: string,
  token: string,
  timing: RecoveryTiming,
): Promise<number> {
  const sendsUntil = Date.now() + timing.claimWriteMs;
  try {
    await ctx.api.instances.updateTitle(instanceUuid, token, { deadline: sendsUntil });
    return Date.now();
  } catch {
    // Whatever the failure, the read after the wait decides.
    return sendsUntil + timing.settledAfterSendMs;
  }
}

/**
 * The instance as the cloud shows it now, through outages until the deadline; undefined when it is gone.
 * Always a call of its own, never a shared or earlier listing: the claim's rules count from when a read
 * was sent.
 */
export async function readNow(
  ctx: ProviderContext,
  instanceUuid: string,
  timing: Pick<RecoveryTiming, "pollIntervalMs">,
  deadline: number,
): Promise<CloudInstance | undefined> {
  try {
    return await retryUntil((call) => ctx.api.instances.info(instanceUuid, call), {
      deadline,
      pauseMs: timing.pollIntervalMs,
    });
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}
