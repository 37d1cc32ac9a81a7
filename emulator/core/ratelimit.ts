import { rateLimited } from "./errors";

/** At most `perSecond` requests per key in any sliding second (`--rate-limit`, DESIGN §5); 0 is off. */
export class RateLimiter {
  private recent = new Map<string, number[]>();

  constructor(private readonly perSecond: number) {}

  /** Throws 429 with Retry-After when `who` already made `perSecond` requests in the last second. */
  check(who: string, nowMs = Date.now()): void {
    if (this.perSecond <= 0) return;
    const window = (this.recent.get(who) ?? []).filter((t) => t > nowMs - 1000);
    if (window.length >= this.perSecond) {
      this.recent.set(who, window);
      throw rateLimited((window[0] + 1000 - nowMs) / 1000);
    }
    window.push(nowMs);
    this.recent.set(who, window);
  }

  clear(): void {
    this.recent.clear();
  }
}
