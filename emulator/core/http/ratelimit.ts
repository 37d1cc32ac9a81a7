/**
 * In core's HTTP room, the rate limit (`--rate-limit`) per caller.
 */
import { rateLimited } from "./errors";

/** How many callers the limiter remembers at most; the least recently seen go first. */
const MAX_TRACKED = 10_000;

/**
 * At most `perSecond` requests per caller in any sliding second (`--rate-limit`); 0 is
 * off. A caller is an accepted API key, or the client's address for everything else (no key, an
 * unknown or a disabled one), so rotating made-up keys does not escape the limit. Only callers seen in
 * the last second are remembered, and never more than MAX_TRACKED of them.
 */
export class RateLimiter {
  private recent = new Map<string, number[]>();
  private lastPrune = 0;

  constructor(
    private readonly perSecond: number,
    private readonly maxTracked = MAX_TRACKED,
  ) {}

  /** Throws 429 with Retry-After when `caller` already made `perSecond` requests in the last second. */
  check(caller: string, nowMs = Date.now()): void {
    if (this.perSecond <= 0) return;
    this.prune(nowMs);
    const window = (this.recent.get(caller) ?? []).filter((t) => t > nowMs - 1000);
    // Re-inserting keeps the map in least-recently-seen order for eviction.
    this.recent.delete(caller);
    if (window.length >= this.perSecond) {
      this.recent.set(caller, window);
      throw rateLimited((window[0] + 1000 - nowMs) / 1000);
    }
    window.push(nowMs);
    this.recent.set(caller, window);
    if (this.recent.size > this.maxTracked) this.recent.delete(this.recent.keys().next().value!);
  }

  /** How many callers are remembered now. */
  size(): number {
    return this.recent.size;
  }

  clear(): void {
    this.recent.clear();
  }

  /** Once a second, forgets callers with no request in the last second. */
  private prune(nowMs: number): void {
    if (nowMs - this.lastPrune < 1000) return;
    this.lastPrune = nowMs;
    for (const [caller, times] of this.recent) {
      if (times[times.length - 1] <= nowMs - 1000) this.recent.delete(caller);
    }
  }
}
