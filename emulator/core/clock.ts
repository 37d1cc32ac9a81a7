/**
 * In core, the simulated clock that drives every transition of every room.
 */
import type { Room } from "./room";

/**
 * Simulated time in Unix seconds. It moves only through `advanceTo`, which plays every transition due
 * on the way, in chronological order across all rooms (the clock drives every transition:
 * docs/design/style.md#the-emulator-routes-stores-and-the-clock).
 */
export class SimClock {
  private exact: number;

  constructor(start: number) {
    this.exact = start;
  }

  /** Whole seconds: every timestamp the API shows and every due time is an integer. */
  now(): number {
    return Math.floor(this.exact);
  }

  /** Simulated time with its fraction, which the real-time ticker accumulates. */
  exactNow(): number {
    return this.exact;
  }

  set(seconds: number): void {
    this.exact = seconds;
  }

  /**
   * Moves to `target`, stopping at every second where a room has something due and running it there.
   * Returns how many due steps ran, so the caller knows whether state changed.
   */
  advanceTo(target: number, rooms: readonly Room[]): number {
    let steps = 0;
    for (;;) {
      const due = earliestDue(rooms);
      if (due === undefined || due > Math.floor(target)) break;
      this.exact = Math.max(this.exact, due);
      for (const room of rooms) {
        const at = room.nextDueAt?.();
        if (at !== undefined && at <= this.now()) room.runDue?.(this.now());
      }
      steps += 1;
      if (steps > 10_000_000)
        throw new Error("the clock is stuck: a room keeps reporting a due time it does not clear");
    }
    this.exact = Math.max(this.exact, target);
    return steps;
  }
}

function earliestDue(rooms: readonly Room[]): number | undefined {
  let earliest: number | undefined;
  for (const room of rooms) {
    const at = room.nextDueAt?.();
    if (at !== undefined && (earliest === undefined || at < earliest)) earliest = at;
  }
  return earliest;
}
