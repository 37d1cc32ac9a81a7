/**
 * Client-wide pacing after 429s, so concurrent callers neither stampede nor waste the allowed rate.
 * A pure module apart from its injected clock: no I/O.
 *
 * A 429 pauses every new send until its Retry-After has passed (at least a second on this API, so each
 * avoided 429 is worth about a second of everyone's time). The gate then paces sends at the rate the
 * server was seen to allow: how many of this client's sends it accepted in the second up to the refused
 * one, which is exactly the limit for a sliding-window limiter. 429s to requests sent before the gate
 * reacted belong to the wave already counted; a new wave while pacing widens the spacing by a quarter.
 * After PACING_MEMORY_MS without a 429, each success shrinks the spacing by a tenth until it is gone.
 *
 * A pause never lasts longer than `maxPauseMs`, whatever the cloud asked. While the cloud's request is
 * longer than that, or longer than a caller's deadline, the gate turns callers away at once instead of
 * holding them: waiting would only end in another refusal. Once the capped pause is over the gate lets
 * one request through again, so a server that sent a wild Retry-After is asked again every few minutes.
 */
import { REAL_CLOCK, type Clock } from "./sleep";

/** Sends are spaced this much wider than the rate the server was seen to allow, to absorb network jitter. */
const PACING_MARGIN = 1.05;
/** A 429 while pacing means the learned rate was too fast (a shared key, a spent token bucket). */
const PACING_GROWTH = 1.25;
/** Without a 429 for this long, the spacing shrinks again, so a raised limit is found. */
const PACING_MEMORY_MS = 30_000;
const MAX_SPACING_MS = 5000;
const UNKNOWN_RATE_SPACING_MS = 50;
/** A 429 without Retry-After pauses this long. */
const DEFAULT_PAUSE_MS = 1000;
export const DEFAULT_MAX_PAUSE_MS = 120_000;

export interface PacingGateOptions {
  clock?: Clock;
  /** The longest the gate pauses after one 429 (the client's maxRateLimitWaitMs). */
  maxPauseMs?: number;
}

export interface GateWaitOptions {
  /** Epoch ms on the gate's clock: a caller whose turn comes later is turned away at once. */
  deadline?: number;
  signal?: AbortSignal;
}

/** What wait() decided: send now (at `sentAt`), or not at all. */
export type GatePass =
  | { kind: "send"; sentAt: number }
  | {
      kind: "turned_away";
      /** The earliest the caller could have been let through. */
      heldUntil: number;
      /** When the cloud's latest Retry-After ends, if a 429 pause is what holds the caller. */
      askedUntil?: number;
    };

export class PacingGate {
  private readonly clock: Clock;
  private readonly maxPauseMs: number;
  /** The end of the current pause, never more than maxPauseMs after the 429 that set it. */
  private pausedUntil = 0;
  /** The end the cloud asked for in the current pause (may be far beyond pausedUntil). */
  private askedUntil = 0;
  private nextSlotAt = 0;
  private spacing = 0;
  /** The spacing before the current wave of 429s. */
  private spacingBeforeWave = 0;
  private waveStartedAt = -Infinity;
  /** The latest refused send (of the current wave, as earlier waves' are older): the window ends there. */
  private latestRefusedSentAt = -Infinity;
  private lastLimitedAt = -Infinity;
  /** When each send went out, oldest first, over the last two seconds; refused ones are taken out. */
  private sends: number[] = [];

  constructor(options: PacingGateOptions = {}) {
    this.clock = options.clock ?? REAL_CLOCK;
    this.maxPauseMs = options.maxPauseMs ?? DEFAULT_MAX_PAUSE_MS;
  }

  /** Current gap between sends, in ms (0 when no 429 was seen lately). */
  get spacingMs(): number {
    return this.spacing;
  }

  /** Holds the caller until it may send; pass `sentAt` back to rateLimited if the send is refused. */
  async wait(options: GateWaitOptions = {}): Promise<GatePass> {
    const deadline = options.deadline ?? Infinity;
    for (;;) {
      const now = this.clock.now();
      const pausing = now < this.pausedUntil;
      const at = Math.max(now, this.pausedUntil, this.nextSlotAt);
      if (pausing && (this.askedUntil > this.pausedUntil || this.askedUntil > deadline)) {
        return { kind: "turned_away", heldUntil: at, askedUntil: this.askedUntil };
      }
      if (at <= now) {
        this.nextSlotAt = now + this.spacing;
        this.recordSend(now);
        return { kind: "send", sentAt: now };
      }
      if (at > deadline) {
        return { kind: "turned_away", heldUntil: at, ...(pausing ? { askedUntil: this.askedUntil } : {}) };
      }
      await this.clock.sleep(at - now, options.signal);
    }
  }

  /** `sentAt`: what wait() let through for the refused request. */
  rateLimited(retryAfterMs: number | undefined, sentAt: number): void {
    const now = this.clock.now();
    const asked = retryAfterMs ?? DEFAULT_PAUSE_MS;
    this.askedUntil = now < this.pausedUntil ? Math.max(this.askedUntil, now + asked) : now + asked;
    this.pausedUntil = Math.max(this.pausedUntil, now + Math.min(asked, this.maxPauseMs));
    this.lastLimitedAt = now;
    this.forgetSend(sentAt);
    // Strictly after: the pause below holds every later send, so a send in the same millisecond as the
    // wave's start went out before the gate reacted.
    if (sentAt > this.waveStartedAt) {
      this.waveStartedAt = now;
      this.spacingBeforeWave = this.spacing;
    }
    // Requests sent together reach the server in any order, so a refused one may have been sent before
    // some that were accepted: the window ends at the latest refused send of the wave. Recomputed on
    // every 429 of the wave, as each takes one more send out of the accepted count.
    this.latestRefusedSentAt = Math.max(this.latestRefusedSentAt, sentAt);
    const end = this.latestRefusedSentAt;
    const accepted = this.sends.filter((t) => t >= end - 1000 && t <= end).length;
    // Nothing accepted says nothing of the rate (the key's budget was spent elsewhere): a short guess.
    const learned = accepted > 0 ? (PACING_MARGIN * 1000) / accepted : UNKNOWN_RATE_SPACING_MS;
    this.spacing = Math.min(MAX_SPACING_MS, Math.max(learned, this.spacingBeforeWave * PACING_GROWTH));
  }

  succeeded(): void {
    if (this.clock.now() - this.lastLimitedAt < PACING_MEMORY_MS) return;
    this.spacing = this.spacing < 10 ? 0 : Math.floor(this.spacing * 0.9);
  }

  private recordSend(at: number): void {
    this.sends.push(at);
    while (this.sends.length > 0 && this.sends[0] < at - 2000) this.sends.shift();
  }

  private forgetSend(at: number): void {
    const index = this.sends.lastIndexOf(at);
    if (index >= 0) this.sends.splice(index, 1);
  }
}
