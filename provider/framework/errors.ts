/**
 * A create or update that left the resource existing but unfinished: the cloud made it, then it could
 * not reach the wanted state (or its outcome is still pending). Pulumi's ErrorResourceInitFailed: the
 * engine keeps the id and outputs in state, so the next run repairs, replaces or deletes the resource
 * instead of forgetting something that bills.
 */
export class ResourceInitError<I = Record<string, unknown>, C = unknown> extends Error {
  override readonly name = "ResourceInitError";
  readonly id: string;
  /**
   * What is known of the resource; the outputs are derived from it as for a finished operation, with
   * `outputs` that no cloud record holds (an Instance's pending create).
   */
  readonly state: { inputs: I; cloud?: C; outputs?: Record<string, unknown> };
  /** Why it could not finish, one line each (the engine shows them). */
  readonly reasons: string[];

  constructor(
    message: string,
    init: {
      id: string;
      state: { inputs: I; cloud?: C; outputs?: Record<string, unknown> };
      reasons?: string[];
    },
  ) {
    super(message);
    this.id = init.id;
    this.state = init.state;
    this.reasons = init.reasons ?? [message];
  }
}

/**
 * Runs a create or update; a ResourceInitError it throws becomes the error `report` makes of it, in the
 * form its front door hands to the engine (ErrorResourceInitFailed, one way or another).
 */
export async function reportingInitFailure<T>(
  operation: () => Promise<T>,
  report: (err: ResourceInitError) => Error,
): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    if (err instanceof ResourceInitError) throw report(err);
    throw err;
  }
}

/**
 * An operation whose effect the provider could not settle: a call that may have acted got no answer it
 * could read, and the cloud has not shown what it did. Something may exist or have changed that the
 * state does not show; the message says what to check. (A create that may have made an instance is
 * never this: it is recorded as a pending create, a ResourceInitError.)
 */
export class UnsettledOutcomeError extends Error {
  override readonly name: string = "UnsettledOutcomeError";
}

/** An error's message, or the thrown value as text. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The engine cancelled the operation (Ctrl-C in `pulumi up`: the native plugin's Cancel). It is the
 * reason of the operation's abort signal, so waits and retry loops stopped by the signal throw it; the
 * operation then says what it had done and what the cloud was last seen doing. `detail` is a clause
 * ("while waiting for ...; last seen: ...") added where the wait was.
 */
export class OperationCancelledError extends Error {
  override readonly name = "OperationCancelledError";

  constructor(readonly detail?: string) {
    super(`the operation was cancelled${detail ? ` ${detail}` : ""}`);
  }
}

/** Whether `err` is the cancellation, or the signal given was aborted (an SDK call rethrows its reason). */
export function isCancelled(err: unknown, signal?: AbortSignal): err is OperationCancelledError {
  return err instanceof OperationCancelledError || (signal?.aborted === true && err === signal.reason);
}

/** The cancellation with the wait it stopped, for messages; a cancellation thrown elsewhere keeps its own. */
export function cancelledWhile(err: OperationCancelledError, what: string): OperationCancelledError {
  return err.detail ? err : new OperationCancelledError(what);
}
