/**
 * Polling until a condition holds. api-v2.md recommends polling every 2 to 5 seconds with backoff;
 * the interval is configurable so tests and a fast emulator clock can poll quickly.
 */
import { isTransientError, TimeoutError } from "./errors";
import { sleep } from "./transport";

export interface WaitOptions {
  /** Give up after this long (default 15 minutes). */
  timeoutMs?: number;
  /** First interval between polls (default 2000 ms); grows by half each poll up to maxPollIntervalMs. */
  pollIntervalMs?: number;
  /** Largest interval between polls (default 5000 ms, never below pollIntervalMs). */
  maxPollIntervalMs?: number;
  signal?: AbortSignal;
}

export interface PollSpec<T> {
  /** What is awaited, for messages: "instance abc to reach status 2 (running)". */
  description: string;
  /** Verb phrase for errors: "wait for instance abc". */
  action: string;
  method: string;
  path: string;
  poll: (signal?: AbortSignal) => Promise<T>;
  /** The state to report when giving up. */
  describeState: (value: T) => string;
  /** True when done; may throw a terminal-failure error. */
  isDone: (value: T) => boolean;
}

export const DEFAULT_WAIT_TIMEOUT_MS = 15 * 60 * 1000;

export async function pollUntil<T>(spec: PollSpec<T>, options: WaitOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
  const firstInterval = options.pollIntervalMs ?? 2000;
  const maxInterval = Math.max(firstInterval, options.maxPollIntervalMs ?? 5000);
  const deadline = Date.now() + timeoutMs;
  let interval = firstInterval;
  let lastState = "nothing yet";
  let lastFailure: string | undefined;
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      const value = await spec.poll(options.signal);
      lastState = spec.describeState(value);
      lastFailure = undefined;
      if (spec.isDone(value)) return value;
    } catch (err) {
      // A wait outlives a bad minute of network: only its own deadline ends it (see isTransientError).
      if (!isTransientError(err)) throw err;
      lastFailure = err.message;
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      const lastSeen = lastFailure ? `${lastState}, then a poll failed (${lastFailure})` : lastState;
      throw new TimeoutError({
        action: spec.action,
        method: spec.method,
        path: spec.path,
        lastSeen,
        message: `Could not ${spec.action}: timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${spec.description}; last seen: ${lastSeen}. Raise the timeout or check the resource in the console.`,
      });
    }
    await sleep(Math.min(interval, remaining), options.signal);
    interval = Math.min(maxInterval, Math.ceil(interval * 1.5));
  }
}
