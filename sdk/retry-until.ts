/**
 * The one "keep trying until a deadline" loop. Long operations (a create waiting for its instance, the
 * cleanup after a failed create, a listing that decides whether an instance exists) must outlive a bad
 * minute of network, so they go on through failures that may pass until their own deadline, and no
 * longer: a failure that cannot pass, or the deadline, ends them with the last failure.
 */
import { isTransientError } from "./errors";
import { sleep } from "./transport";

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
  /** Injected for tests; default Date.now. */
  now?: () => number;
}

/**
 * Runs `work` until it succeeds. A failure that is not retryable, or one after which the next attempt
 * would start past the deadline, is thrown as it is: callers wrap it with what they were doing.
 */
export async function retryUntil<T>(work: () => Promise<T>, options: RetryUntilOptions): Promise<T> {
  const now = options.now ?? Date.now;
  const retryable = options.retryable ?? isTransientError;
  const maxPause = Math.max(options.pauseMs, options.maxPauseMs ?? 5000);
  let pause = Math.max(1, options.pauseMs);
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      return await work();
    } catch (err) {
      if (!retryable(err) || now() + pause > options.deadline) throw err;
      options.onRetry?.(err);
    }
    await sleep(pause, options.signal);
    pause = Math.min(maxPause, Math.ceil(pause * 1.5));
  }
}
