/**
 * The timing model that every rule of ownership and lost-create recovery rests on, and every bound
 * derived from it. One quantity comes from the provider's settings: T, the request timeout, never below
 * a floor (below). The model:
 * - an attempt's answer arrives within T of its send, or it counts as lost;
 * - the cloud may hold a call past our timeout: a call whose answer was lost is carried out within 2T of
 *   the loss or never, so any call is carried out within 3T of its send or never (LATE_COMMIT).
 * No bound below is shorter than this model allows. Deployers that share one account must share T (the
 * default, unless they all change `gpucloud:requestTimeoutMs`): the grace one deployer waits covers the
 * marking of every other deployer only when their T is not longer than its own.
 *
 * The floor. The late-commit bound is an assumption about the cloud, not something our timeout makes
 * true: a request timeout of 100 ms does not make a cloud whose creates take a second carry them out
 * within 300 ms. So the model never takes T below REMOTE_FLOOR_MS, 3 s, for a cloud across a network: its
 * late-commit bound (3T, 9 s) then covers the live service's create latency (about 1 s) nine times over,
 * and a create held in a gateway's queue for several seconds (7 s is one seen) still lands inside it
 * instead of falling to the late watch. It costs little: at the default T (30 s) it never applies, and a
 * request timeout set below it still ends requests sooner (reads fail over faster); only the recovery's
 * waits use the floor, a few seconds more on an answer already lost. A cloud on this machine (a loopback base URL: the emulator) has no
 * network between it and us, and its latency is what whoever started it asked for, so the model takes the
 * request timeout as given: that is how tests and emulator users run the recovery in seconds.
 *
 * When a cloud breaks the model anyway (it carries a create out later than 3T after its send), a call that
 * the recovery judged to have made nothing did make an instance, after its window closed. Such a late
 * arrival is caught at the end of the create (the late watch, late-watch.ts): every lost call judged to have
 * made nothing stays watched with a window that never closes. A late arrival is provably this create's to
 * deal with when all of these hold: it is of the spec, created at or after the call's window opened and
 * not listed before the call; no state of this process holds it; it was never seen titled (a title means
 * some deployer had its create answer, even if a person cleared it since); it stayed untitled for the
 * grace, so no live deployer that got its create answer will still title it; and this process wins the
 * claim on it, so no other deployer's recovery takes it too. Then it is this create's: its instance when it
 * has none yet, else surplus, and destroyed. One that cannot be settled that way is named in a failure,
 * never passed over in silence. The watch begins as soon as the call is judged, so that a cloud far slower
 * than the model is caught while the create still runs, and what it claimed tells this process how slow
 * the cloud is (pace.ts): later recoveries of the run wait that long. What the cloud carries out after the
 * create has ended is beyond any watch: `gpucloud-orphans` finds it.
 *
 * With `gpucloud:sharedAccount` false, no other deployer creates instances with the account, so nobody
 * else will title an instance of the spec and nobody else claims one: the grace and the wait for rival
 * claims are nil, and a lost answer costs the late-commit window and the reads around it.
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
/** The least T the model takes for a cloud across a network (see above). */
export const REMOTE_FLOOR_MS = 3000;

type TimingSettings = Pick<ProviderSettings, "requestTimeoutMs" | "pollIntervalMs"> &
  Partial<Pick<ProviderSettings, "baseUrl" | "sharedAccount">>;

export interface RecoveryTiming {
  /** T: one request's timeout, never below the floor. */
  requestMs: number;
  /** Other deployers create instances with the account (`gpucloud:sharedAccount`). */
  shared: boolean;
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
   * answer will still mark the instance. Nil when the account is not shared.
   */
  graceMs: number;
  /** A claim's token writes are all sent within this long of the read that found the instance unmarked (T). */
  claimWriteMs: number;
  /**
   * After a claim's own write was carried out, every rival write has landed within this long (5T): a
   * rival read the instance unmarked before our write landed, had its answer within T, sent within
   * claimWriteMs and was carried out within settledAfterSendMs. Nil when the account is not shared.
   */
  rivalsLandedMs: number;
  pollIntervalMs: number;
  /** How often the reconciler lists: the poll interval, but never more often than ROUND_SHARE_OF_T. */
  roundMs: number;
}

/** A base URL whose host is this machine: no network between the cloud and us. */
export function isLoopback(baseUrl: string): boolean {
  let host: string;
  try {
    // A trailing dot names the same host from the root (localhost. is localhost), as the emulator takes it.
    host = new URL(baseUrl).hostname.replace(/\.$/, "");
  } catch {
    return false;
  }
  return host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** T as the model takes it: the request timeout, never below the floor for a cloud across a network. */
export function modelRequestMs(settings: Pick<TimingSettings, "requestTimeoutMs" | "baseUrl">): number {
  const local = settings.baseUrl === undefined || isLoopback(settings.baseUrl);
  return local ? settings.requestTimeoutMs : Math.max(settings.requestTimeoutMs, REMOTE_FLOOR_MS);
}

/**
 * The model's bounds. `longestCommitMs`: the slowest commit this process saw a cloud make (pace.ts); T is
 * never below half of it, so a cloud that broke the model once is waited for long enough from then on.
 */
export function recoveryTiming(settings: TimingSettings, longestCommitMs = 0): RecoveryTiming {
  const t = Math.max(modelRequestMs(settings), Math.ceil(longestCommitMs / 2));
  const shared = settings.sharedAccount ?? true;
  const settledAfterSendMs = LATE_COMMIT_T * t;
  const markWindowMs = MARK_WINDOW_T * t;
  const claimWriteMs = CLAIM_WRITE_T * t;
  return {
    requestMs: t,
    shared,
    lateCommitMs: settledAfterSendMs - t,
    settledAfterSendMs,
    markWindowMs,
    graceMs: shared ? t + markWindowMs + settledAfterSendMs : 0,
    claimWriteMs,
    rivalsLandedMs: shared ? t + claimWriteMs + settledAfterSendMs : 0,
    pollIntervalMs: settings.pollIntervalMs,
    roundMs: Math.max(settings.pollIntervalMs, ROUND_SHARE_OF_T * t),
  };
}

/**
 * How long a claim takes at most once it starts, its write's answer lost: the read, the write, the time
 * that write may still land, the wait for rivals, and the read after.
 */
export function claimMs(t: RecoveryTiming): number {
  return 2 * t.requestMs + t.claimWriteMs + t.settledAfterSendMs + t.rivalsLandedMs;
}

/**
 * How long after a lost answer the recovery may need to adopt an instance that appeared at once: the
 * grace from its first sight, the claim, and a few listing rounds between. A create's deadline never cuts
 * this short (create-recovery.ts): an instance that appeared is always followed to its end.
 */
export function adoptionMs(t: RecoveryTiming): number {
  return t.graceMs + claimMs(t) + 4 * t.roundMs;
}

/**
 * How long after a lost answer the cloud may still carry out the call: a call of no effect by then never
 * takes effect (lost creates and power changes alike).
 */
export function lateCommitMs(settings: Pick<TimingSettings, "requestTimeoutMs" | "baseUrl">): number {
  return recoveryTiming({ ...settings, pollIntervalMs: 0 }).lateCommitMs;
}
