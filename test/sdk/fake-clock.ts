/** A clock the test moves: sleepers wake in time order as it advances, each given a turn to run. */
import type { Clock } from "pulumi-gpucloud/sdk";

interface Sleeper {
  at: number;
  wake: () => void;
}

/** Lets every promise callback and I/O-free continuation that is ready run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class FakeClock implements Clock {
  private time: number;
  private sleepers: Sleeper[] = [];
  /** Every delay asked of sleep(), in order. */
  readonly requested: number[] = [];

  constructor(start = 0) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.requested.push(ms);
    return new Promise((resolve, reject) => {
      signal?.throwIfAborted();
      const sleeper: Sleeper = { at: this.time + Math.max(0, ms), wake: resolve };
      this.sleepers.push(sleeper);
      signal?.addEventListener(
        "abort",
        () => {
          this.sleepers = this.sleepers.filter((s) => s !== sleeper);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  /** Moves time forward to `to`, waking each sleeper due on the way at its own time. */
  async advanceTo(to: number): Promise<void> {
    for (;;) {
      await settle();
      const due = this.sleepers.filter((s) => s.at <= to).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.sleepers = this.sleepers.filter((s) => s !== due);
      this.time = Math.max(this.time, due.at);
      due.wake();
    }
    this.time = Math.max(this.time, to);
    await settle();
  }

  advance(ms: number): Promise<void> {
    return this.advanceTo(this.time + ms);
  }
}
