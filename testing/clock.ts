/**
 * Moving a stopped emulator clock (`timeScale: 0`) while the steps of an operation wait on it: an instance
 * boots, stops or goes away only when simulated time passes, so without this an `up` against such an
 * emulator waits until the provider's own timeout. The clock moves only while a create, update or delete
 * is in flight, and stops as soon as none is: a preview or a refresh never moves it, and what a test
 * does between operations happens at a time of its own choosing.
 */
import { setTimeout as sleep } from "node:timers/promises";

/** A clock the harness can move: the emulator of `startEmulator` is one. */
export interface SteppedClock {
  /** Moves simulated time forward by `seconds`, running every transition due. */
  advance(seconds: number): Promise<void>;
}

/**
 * Each move of the clock: ten simulated seconds (an instance boots in six), then a pause of real time in
 * which the provider's polls see the new time: 200 simulated seconds per real second. The provider
 * measures its wait timeout on the cloud's clock too, so a waiting provider kept from polling for 4.5 s
 * of real time (a loaded machine) would find the default 900 s spent: slower would be safer, faster
 * would make each boot cost less real time.
 */
const STEP_SECONDS = 10;
const PAUSE_MS = 50;

/** Moves `clock` while at least one piece of work passed to `whileWaiting` is unsettled. */
export class ClockDriver {
  private inFlight = 0;
  private ticking: Promise<void> | undefined;
  private failure: Error | undefined;

  constructor(private readonly clock: SteppedClock) {}

  /** Runs `work` with the clock moving; several at once share one pace, as steps of a fleet do. */
  async whileWaiting<T>(work: () => Promise<T>): Promise<T> {
    // A new round tries the clock again: a failure stalls only the steps of its own round.
    if (this.inFlight === 0) this.failure = undefined;
    this.inFlight += 1;
    this.ticking ??= this.tick();
    try {
      return await work();
    } finally {
      this.inFlight -= 1;
    }
  }

  /**
   * Why the clock stopped moving, when moving it failed: a step that then timed out waited for a time
   * that never came, and its failure says so.
   */
  get stalled(): string | undefined {
    return (
      this.failure &&
      `Its waits could not end: the harness could not move the emulator's clock (${this.failure.message})`
    );
  }

  private async tick(): Promise<void> {
    try {
      while (this.inFlight > 0 && !this.failure) {
        await this.clock.advance(STEP_SECONDS);
        await sleep(PAUSE_MS);
      }
    } catch (err) {
      this.failure = err as Error;
    } finally {
      this.ticking = undefined;
    }
  }
}
