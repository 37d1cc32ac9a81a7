/**
 * What may be retried and how long to wait: a pure module (no I/O, no clock, randomness injected).
 *
 * | failure                                   | read | idempotent | keyed | unsafe            |
 * |-------------------------------------------|------|------------|-------|-------------------|
 * | not sent (connect refused/DNS/connect t.o)| retry| retry      | retry | retry             |
 * | sent, answer lost (reset, timeout)        | retry| retry      | retry | OUTCOME UNKNOWN   |
 * | 429 (refused before any work)             | retry| retry      | retry | retry             |
 * | 503 (service unavailable: not done)       | retry| retry      | retry | retry             |
 * | 500, 502, 504, other 5xx (ambiguous)      | retry| retry      | retry | OUTCOME UNKNOWN   |
 * | 401, 403, 404, other 4xx, code != 0       | fail | fail       | fail  | fail              |
 * | answer larger than maxResponseBytes       | fail | fail       | fail  | OUTCOME UNKNOWN   |
 * | 2xx answer that cannot be read            | retry| retry      | retry | OUTCOME UNKNOWN   |
 *
 * - read: GETs. idempotent: writes whose repetition is harmless (update_title, set_idle_close,
 *   shutdown_timer, destroy, image delete, model-run cancel). keyed: writes carrying an
 *   idempotency_key, retried with the SAME key (workflow submit, model-run submit).
 *   unsafe: everything else (create_by_pod/by_image, startup, shutdown, restart, save_image, asset upload).
 * - A 500 answer to an unsafe call is ambiguous: the service may have committed the work before failing
 *   (public clients report that a create that times out may or may not have created an instance), so the caller
 *   must reconcile. A 503 and a 429 say the service turned the request away, so resending is safe
 *   (our choice; the API is silent on 503).
 * - An answer larger than the client reads is not a lost connection: asking again brings the same
 *   answer, so it is never resent. Its status line came, so an unsafe call may have done its work.
 * - A 2xx answer that cannot be read (an HTML page of a gateway, JSON cut short, a body compressed
 *   without saying so, success data without a required field) passed whatever stands before the cloud:
 *   an unsafe call may have done its work. Such answers come of proxies and gateways between, which
 *   often answer well the next time, so a call safe to repeat is asked again.
 * - Waits: exponential backoff with full jitter, capped; never shorter than Retry-After.
 * - Budgets: a 429 says the service did no work and when to come back, so waiting it out is safe and is
 *   counted apart from the other failures: a fleet operation that meets a rate limit (hundreds of calls
 *   at once) waits its turn instead of failing after `maxRetries` refusals.
 */

export type CallSafety = "read" | "idempotent" | "keyed" | "unsafe";

export type Failure =
  | { kind: "not_sent" }
  | { kind: "lost" }
  | { kind: "timeout" }
  | { kind: "too_large" }
  | { kind: "unreadable" }
  | { kind: "status"; status: number; retryAfterMs?: number };

export type Decision =
  { action: "retry"; delayMs: number } | { action: "fail" } | { action: "outcome_unknown" };

export interface BackoffSettings {
  /** First backoff ceiling in ms; doubles each retry. */
  baseDelayMs: number;
  /** Highest backoff ceiling in ms (Retry-After may ask for longer and is honoured). */
  maxDelayMs: number;
}

export const DEFAULT_BACKOFF: BackoffSettings = { baseDelayMs: 500, maxDelayMs: 8000 };

/** Resends of one call after 429s; at a Retry-After of 1 s and the backoff cap, minutes of waiting. */
export const MAX_RATE_LIMIT_RETRIES = 30;

/** Resends one call has already made, by cause. */
export interface RetriesSpent {
  /** After failures other than 429 (lost answers, 5xx, timeouts, unreachable). */
  ordinary: number;
  /** After 429 answers. */
  rateLimited: number;
}

export const NO_RETRIES_YET: RetriesSpent = { ordinary: 0, rateLimited: 0 };

function isRateLimit(failure: Failure): boolean {
  return failure.kind === "status" && failure.status === 429;
}

/** The budget this failure draws on, after counting it: which counter to bump when resending. */
export function spend(spent: RetriesSpent, failure: Failure): RetriesSpent {
  return isRateLimit(failure)
    ? { ...spent, rateLimited: spent.rateLimited + 1 }
    : { ...spent, ordinary: spent.ordinary + 1 };
}

type Verdict = "retry" | "fail" | "outcome_unknown";

function verdict(safety: CallSafety, failure: Failure): Verdict {
  switch (failure.kind) {
    case "not_sent":
      return "retry";
    case "lost":
    case "timeout":
    case "unreadable":
      return safety === "unsafe" ? "outcome_unknown" : "retry";
    case "too_large":
      return safety === "unsafe" ? "outcome_unknown" : "fail";
    case "status": {
      const s = failure.status;
      if (s === 429 || s === 503) return "retry";
      if (s >= 500) return safety === "unsafe" ? "outcome_unknown" : "retry";
      return "fail";
    }
  }
}

/** Whether a failure leaves the outcome of this call unknown, regardless of retries left. */
export function isOutcomeUnknown(safety: CallSafety, failure: Failure): boolean {
  return verdict(safety, failure) === "outcome_unknown";
}

/** Full-jitter backoff: uniform in [0, min(max, base * 2^retryIndex)], then at least Retry-After. */
export function backoffDelay(
  retryIndex: number,
  retryAfterMs: number | undefined,
  settings: BackoffSettings = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** retryIndex);
  const jittered = Math.floor(random() * ceiling);
  return Math.max(jittered, retryAfterMs ?? 0);
}

/**
 * Decide what to do after an attempt failed, given the resends the call has already made (`spent`).
 * `maxRetries` is how many resends are allowed after failures other than 429; 429s have their own
 * budget, MAX_RATE_LIMIT_RETRIES, except that `maxRetries` 0 turns every resend off.
 */
export function decide(
  safety: CallSafety,
  failure: Failure,
  spent: RetriesSpent,
  maxRetries: number,
  settings: BackoffSettings = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): Decision {
  const v = verdict(safety, failure);
  if (v !== "retry") return { action: v };
  const [used, budget] = isRateLimit(failure)
    ? [spent.rateLimited, maxRetries === 0 ? 0 : MAX_RATE_LIMIT_RETRIES]
    : [spent.ordinary, maxRetries];
  if (used >= budget) return { action: "fail" };
  const retryAfterMs = failure.kind === "status" ? failure.retryAfterMs : undefined;
  return { action: "retry", delayMs: backoffDelay(used, retryAfterMs, settings, random) };
}

/**
 * Retry-After in ms: delta-seconds or an HTTP date (RFC 9110 10.2.3). Unparsable or absent: undefined.
 * `nowMs` is injected to keep this pure.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const trimmed = raw.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}
