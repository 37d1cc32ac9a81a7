/**
 * Polling until a condition holds, on retryUntil. The API recommends polling every 2 to 5 seconds with
 * backoff (docs/design/cloud-api.md#workflow-runs); the interval is configurable so tests and a fast
 * emulator clock can poll quickly.
 */
import { isTransientError, TimeoutError } from "./errors";
import { retryUntil } from "./retry-until";
import { terminalSafe } from "./terminal-safe";
import type { CallOptions } from "./transport";

export interface WaitOptions {
  /** Give up after this long (default 15 minutes). */
  timeoutMs?: number;
  /** Give up at this time (epoch ms) instead; wins over timeoutMs. */
  deadline?: number;
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
  /** One poll; pass `call` (the wait's deadline and signal) to the calls it makes. */
  poll: (call: CallOptions) => Promise<T>;
  /** The state to report when giving up. */
  describeState: (value: T) => string;
  /** True when done; may throw a terminal-failure error. */
  isDone: (value: T) => boolean;
}

export const DEFAULT_WAIT_TIMEOUT_MS = 15 * 60 * 1000;

/** A poll that saw the condition not hold yet: retried like a transient failure. */
const NOT_YET = new Error("not yet");

export async function pollUntil<T>(spec: PollSpec<T>, options: WaitOptions = {}): Promise<T> {
  const started = Date.now();
  const deadline = options.deadline ?? started + (options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS);
  const firstInterval = options.pollIntervalMs ?? 2000;
  let lastState = "nothing yet";
  let lastFailure: string | undefined;
  const noteFailure = (err: unknown): void => {
    if (err !== NOT_YET) lastFailure = (err as Error).message;
  };
  try {
    return await retryUntil(
      async (call) => {
        const value = await spec.poll(call);
        // The state is the server's words (a run status is any text it sends).
        lastState = terminalSafe(spec.describeState(value), 200);
        lastFailure = undefined;
        if (spec.isDone(value)) return value;
        throw NOT_YET;
      },
      {
        deadline,
        pauseMs: firstInterval,
        maxPauseMs: Math.max(firstInterval, options.maxPollIntervalMs ?? 5000),
        // A wait outlives a bad minute of network: only its own deadline ends it (see isTransientError).
        retryable: (err) => err === NOT_YET || isTransientError(err),
        onRetry: noteFailure,
        signal: options.signal,
      },
    );
  } catch (err) {
    if (err !== NOT_YET && !isTransientError(err)) throw err;
    noteFailure(err);
    const lastSeen = lastFailure ? `${lastState}, then a poll failed (${lastFailure})` : lastState;
    throw new TimeoutError({
      action: spec.action,
      method: spec.method,
      path: spec.path,
      lastSeen,
      message: `Could not ${spec.action}: timed out after ${Math.round((deadline - started) / 1000)} s waiting for ${spec.description}; last seen: ${lastSeen}. Raise the timeout or check the resource in the console.`,
    });
  }
}
