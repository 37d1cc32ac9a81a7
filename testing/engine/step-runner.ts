/**
 * How one step runs: announced to `onEvent` before and after, with the emulator's clock moving while it
 * waits (when the stack was given one), and its failure named after the step.
 */
import { ClockDriver, type SteppedClock } from "../clock";
import { stepError, type StepError } from "./errors";
import type { Operation, Step } from "./steps";

export type EngineEvent =
  | { kind: "step-start"; operation: Operation; step: Step }
  | { kind: "step-done"; operation: Operation; step: Step; durationMs: number }
  | { kind: "step-failed"; operation: Operation; step: Step; error: StepError }
  /** The program failed after its operation had already stopped on another failure. */
  | { kind: "late-failure"; operation: Operation; error: Error };

export class StepRunner {
  private readonly clock: ClockDriver | undefined;

  constructor(
    clock: SteppedClock | undefined,
    private readonly onEvent: ((event: EngineEvent) => void) | undefined,
  ) {
    this.clock = clock && new ClockDriver(clock);
  }

  async apply<T>(operation: Operation, step: Step, work: () => Promise<T>): Promise<T> {
    const started = Date.now();
    this.onEvent?.({ kind: "step-start", operation, step });
    try {
      const done = await (this.clock ? this.clock.whileWaiting(work) : work());
      this.onEvent?.({ kind: "step-done", operation, step, durationMs: Date.now() - started });
      return done;
    } catch (err) {
      const error = stepError(step, err as Error, this.clock?.stalled);
      this.onEvent?.({ kind: "step-failed", operation, step, error });
      throw error;
    }
  }

  /** The program failed after its operation had already stopped on another failure. */
  lateFailure(operation: Operation, error: Error): void {
    this.onEvent?.({ kind: "late-failure", operation, error });
  }
}
