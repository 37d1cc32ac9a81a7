/** Judging "sent inside a Retry-After window" from the client's own request log. */
import type { RequestEvent } from "pulumi-gpucloud/sdk";

/**
 * The log places a 429's arrival at sentAt + durationMs, two whole-millisecond readings, while the
 * client's gate pauses from its own reading of the clock: they can differ by a millisecond either way.
 */
const CLOCK_READING_MS = 2;

/**
 * Requests the client sent after it had received a 429 and before that 429's Retry-After had passed.
 * (A 429 is received at sentAt + durationMs; the log's clock is the provider process's own.)
 */
export function sentInsideRetryAfter(events: RequestEvent[]): number {
  const refusals = events
    .filter((e) => e.status === 429)
    .map((e) => {
      const receivedAt = e.sentAt + e.durationMs;
      return { receivedAt, until: receivedAt + (e.retryAfterMs ?? 0) - CLOCK_READING_MS };
    });
  return events.filter((e) => refusals.some((r) => e.sentAt > r.receivedAt && e.sentAt < r.until)).length;
}
