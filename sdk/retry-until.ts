/**
 * The one "keep trying until a deadline" loop. Long operations (a create waiting for its instance, the
 * cleanup after a failed create, a listing that decides whether an instance exists, every wait of
 * waiters.ts) must outlive a bad minute of network, so they go on through failures that may pass until
 * their own deadline, and no longer: a failure that cannot pass, or the deadline, ends them with the last
 * failure. The last pause is cut short to end at the deadline, so the last attempt comes at the deadline.
 */
import { isTransientError } from "./errors";
import { REAL_CLOCK, type Clock } from "./sleep";
import type { CallOptions } from "./transport";

export interface RetryUntilOptions {
  /** Epoch ms after which no new attempt starts. */
  deadline: number;
  /** Pause after the first failure; it grows by half per failure up to maxPauseMs. */
  pauseMs: number;
  /** Largest pause (default 5000 ms, never below pauseMs). */
  maxPauseMs?: number;
  /** Whether a failure may pass (default: isTransientError). */
  retryable?: (err: unknown) => boolean;
  /** Told of every failure that will be retried (for "last seen" messages). */
  onRetry?: (err: unknown) => void;
  signal?: AbortSignal;
  /** Injected for tests; default the real clock. */
  clock?: Clock;
}

/**
 * Runs `work` until it succeeds. `work` receives the deadline and signal to pass to its calls, so no
 * call waits past the operation's deadline. A failure that is not retryable, or one at or after the
 * deadline, is thrown as it is: callers wrap it with what they were doing.
 */
export async function retryUntil<T>(
  work: (call: CallOptions & { deadline: number }) => Promise<T>,
  options: RetryUntilOptions,
): Promise<T> {
  const clock = options.clock ?? REAL_CLOCK;
  const retryable = options.retryable ?? isTransientError;
  const maxPause = Math.max(options.pauseMs, options.maxPauseMs ?? 5000);
  const call = { deadline: options.deadline, signal: options.signal };
  let pause = Math.max(1, options.pauseMs);
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      return await work(call);
    } catch (err) {
      const left = options.deadline - clock.now();
      if (!retryable(err) || left <= 0) throw err;
      options.onRetry?.(err);
      await clock.sleep(Math.min(pause, left), options.signal);
    }
    pause = Math.min(maxPause, Math.ceil(pause * 1.5));
  }
}
