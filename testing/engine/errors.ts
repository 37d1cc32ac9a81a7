/** How an operation fails: one step, one resource's check, or the operation as a whole; each message names the resource. */
import { sentence } from "../program";
import {
  failureList,
  ProviderCallError,
  ResourceInitFailedError,
  type CheckFailure,
} from "../provider-process";
import type { PolicyViolation } from "../policy-pack";
import { typeName, type Operation, type Step } from "./steps";

/** One step failed; `cause` is the provider's error (a ResourceInitFailedError when it made the resource). */
export class StepError extends Error {
  override readonly name = "StepError";
  constructor(
    message: string,
    readonly step: Step,
    override readonly cause: Error,
  ) {
    super(message);
  }
}

/** A resource's inputs failed its provider's check, before any call to the cloud: each failure names its input. */
export class CheckFailedError extends Error {
  override readonly name = "CheckFailedError";
  constructor(
    /** The resource's name in the program. */
    readonly resource: string,
    readonly type: string,
    readonly failures: CheckFailure[],
  ) {
    super(`${resource} (${typeName(type)}) failed its check: ${failureList(failures)}`);
  }
}

/**
 * An operation failed; the state keeps whatever was done before the failure. Mandatory policy violations
 * are a failure too: a PolicyViolationError among `failures`, and every violation reported (advisory ones
 * included) in `policyViolations`.
 */
export class OperationError extends Error {
  override readonly name = "OperationError";
  /**
   * A failure left its resource's status unknown (see ProviderCallError): the Pulumi CLI then reports the
   * update as possibly corrupt (`maybeCorrupt` in its summary and JSON output).
   */
  readonly maybeCorrupt: boolean;

  constructor(
    readonly operation: Operation,
    readonly failures: Error[],
    readonly steps: Step[],
    readonly policyViolations: PolicyViolation[] = [],
  ) {
    // Resources that fail alike (every instance of a fleet) give one message each.
    super(`${operation} failed: ${[...new Set(failures.map((f) => f.message))].join("; ")}`);
    this.maybeCorrupt = failures.some(leavesStatusUnknown);
  }
}

/** Whether `err`, or a failure it was made of, is a provider's answer that leaves a resource's status unknown. */
function leavesStatusUnknown(err: unknown): boolean {
  for (let e = err; e instanceof Error; e = e.cause) {
    if (e instanceof ProviderCallError && e.statusUnknown) return true;
  }
  return false;
}

/** `stalled`: why the step's waits could not end, when the harness could not move the clock. */
export function stepError(step: Step, cause: Error, stalled?: string): StepError {
  let message = `${step.op} of ${step.name} (${typeName(step.type)}) failed: ${cause.message}`;
  if (stalled) message = `${sentence(message)} ${sentence(stalled)}`;
  if (cause instanceof ResourceInitFailedError) {
    const reasons = cause.reasons.filter((r) => !cause.message.includes(r));
    if (reasons.length > 0) message += ` (${reasons.join("; ")})`;
    // A pending create is a record of a create whose outcome is unknown, not something the provider made.
    const what = cause.id.startsWith("pending-create:")
      ? `The provider recorded it as ${cause.id}`
      : `The provider made it (id ${cause.id}) but could not finish it`;
    message = `${sentence(message)} ${what}: it stays in the state, and the next up finishes or replaces it.`;
  }
  return new StepError(message, step, cause);
}

/** Names the resource and the call in a provider failure (the provider's message names neither). */
export function failed(call: string, name: string, type: string): (err: Error) => never {
  return (err) => {
    throw new Error(`${call} of ${name} (${typeName(type)}) failed: ${err.message}`);
  };
}
