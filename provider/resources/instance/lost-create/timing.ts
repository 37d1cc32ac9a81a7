/**
 * The timing model that every rule of ownership and lost-create recovery rests on, and every bound
 * derived from it. One quantity comes from the provider's settings: T, the request timeout. The model:
 * - an attempt's answer arrives within T of its send, or it counts as lost;
 * - the cloud may hold a call past our timeout: a call whose answer was lost is carried out within 2T of
 *   the loss or never, so any call is carried out within 3T of its send or never (LATE_COMMIT).
 * No bound below is shorter than this model allows. Deployers that share one account must share T (the
 * default, unless they all change `gpucloud:requestTimeoutMs`): the grace one deployer waits covers the
 * marking of every other deployer only when their T is not longer than its own.
 */
import type { ProviderSettings } from "../../../settings";

/** A call is carried out within this many T of its send, or never. */
const LATE_COMMIT_T = 3;
/** A creator sends its owner mark within this many T of the create's answer. */
const MARK_WINDOW_T = 2;
/** A claim sends its token within this many T of the answer to the read that found the instance unmarked. */
const CLAIM_WRITE_T = 1;
/**
 * The reconciler lists at most once per this share of T: what it waits for (a late commit, a mark, the
 * grace) moves on the scale of T, and listing faster would only load a cloud that is already losing
 * answers.
 */
const ROUND_SHARE_OF_T = 0.25;

export interface RecoveryTiming {
  /** T: one request's timeout. */
  requestMs: number;
  /** After a lost answer, the call may still be carried out for this long (2T). */
  lateCommitMs: number;
  /** After its send, a call has been carried out or never will be (3T). */
  settledAfterSendMs: number;
  /** A creator's owner mark is sent within this long of the create's answer (2T). */
  markWindowMs: number;
  /**
   * How long an instance must have been seen unmarked before a lost create may claim it (6T): its
   * creator's answer came within T of the commit, its mark was sent within markWindowMs of that answer
   * and carried out within settledAfterSendMs of its send. Past the grace, no live creator that got its
   * answer will still mark the instance.
   */
  graceMs: number;
  /** A claim's token writes are all sent within this long of the read that found the instance unmarked (T). */
  claimWriteMs: number;
  /**
   * After a claim's own write was carried out, every rival write has landed within this long (5T): a
   * rival read the instance unmarked before our write landed, had its answer within T, sent within
   * claimWriteMs and was carried out within settledAfterSendMs.
   */
  rivalsLandedMs: number;
  pollIntervalMs: number;
  /** How often the reconciler lists: the poll interval, but never more often than ROUND_SHARE_OF_T. */
  roundMs: number;
}

export function recoveryTiming(
  settings: Pick<ProviderSettings, "requestTimeoutMs" | "pollIntervalMs">,
): RecoveryTiming {
  const t = settings.requestTimeoutMs;
  const settledAfterSendMs = LATE_COMMIT_T * t;
  const markWindowMs = MARK_WINDOW_T * t;
  const claimWriteMs = CLAIM_WRITE_T * t;
  return {
    requestMs: t,
    lateCommitMs: settledAfterSendMs - t,
    settledAfterSendMs,
    markWindowMs,
    graceMs: t + markWindowMs + settledAfterSendMs,
    claimWriteMs,
    rivalsLandedMs: t + claimWriteMs + settledAfterSendMs,
    pollIntervalMs: settings.pollIntervalMs,
    roundMs: Math.max(settings.pollIntervalMs, ROUND_SHARE_OF_T * t),
  };
}

/**
 * How long after a lost answer the cloud may still carry out the call: a call of no effect by then never
 * takes effect (lost creates and power changes alike).
 */
export function lateCommitMs(settings: Pick<ProviderSettings, "requestTimeoutMs">): number {
  return recoveryTiming({ ...settings, pollIntervalMs: 0 }).lateCommitMs;
}
