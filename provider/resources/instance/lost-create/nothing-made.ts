/**
 * The failures of a create that made nothing (create-recovery.ts: make): cancelled before its call was
 * sent or while an earlier run's pending record was resolved, or refused by a rate limit for longer than
 * it may wait. Nothing is left to keep or destroy; what fails after an instance was made is
 * ../create-failures.ts's.
 */
import { RateLimitError } from "../../../../sdk";
import { formatWait } from "../../../../sdk/answers";
import { OperationCancelledError } from "../../../framework/errors";

/**
 * A 429 whose Retry-After outlasts what the create may wait, in the provider's words: the SDK's text
 * advises raising a client option that a provider user does not have.
 */
export function refusedForLong(err: unknown): Error | undefined {
  if (!(err instanceof RateLimitError) || !err.tooLongToWait || err.retryAfterMs === undefined)
    return undefined;
  return new Error(
    `Could not create instance: the cloud refused the create call with a rate limit (HTTP 429) and asked to wait ${formatWait(err.retryAfterMs)}, ` +
      "longer than this create may wait, so it was not sent again and no instance was made. " +
      "Run the update again after that time; fewer creates at once (`pulumi up --parallel N`) ask less of the limit.",
    { cause: err },
  );
}

/** A create cancelled before it made anything: a plain failure, since there is nothing to keep. */
export function cancelledError(when: string): Error {
  return new Error(
    `Could not create instance: the operation was cancelled ${when}. Run \`pulumi up\` again to create it.`,
    { cause: new OperationCancelledError(when) },
  );
}
