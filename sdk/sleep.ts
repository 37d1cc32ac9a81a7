/**
 * Waiting, safely for any length: Node fires a timer of more than 2^31-1 ms at once (with a warning),
 * so a Retry-After of years would turn a wait into a spin. Long waits are taken in pieces instead.
 */

/** The longest delay setTimeout honours. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Resolves after `ms` (0 for a negative or NaN delay); rejects with the signal's reason on abort. */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  let left = Number.isNaN(ms) ? 0 : Math.max(0, ms);
  do {
    const piece = Math.min(left, MAX_TIMER_MS);
    await sleepPiece(piece, signal);
    left -= piece;
  } while (left > 0);
}

function sleepPiece(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * `work`, or a rejection with the signal's reason as soon as the signal aborts, for work that does not
 * take the signal itself (it goes on in the background; its outcome is then handled and dropped).
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    const done = (): void => signal.removeEventListener("abort", onAbort);
    work.then(
      (value) => {
        done();
        resolve(value);
      },
      (err: unknown) => {
        done();
        reject(err);
      },
    );
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Time as the waiting parts of the client see it; tests inject a clock they move themselves. */
export interface Clock {
  /** Epoch ms. */
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const REAL_CLOCK: Clock = { now: () => Date.now(), sleep };
