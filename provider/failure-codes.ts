/**
 * The gRPC status each failure answers the engine with, through the native plugin (native/rpc-failure.ts)
 * and the dynamic providers' read and delete (framework/dynamic-provider.ts): the one table, read top to
 * bottom, the first class that matches deciding. The engine reads UNKNOWN, INTERNAL and DATA_LOSS as "the resource's status
 * is unknown" and marks the update as possibly corrupt; every other code as a failure it understands, the
 * state as it was (docs/design/pulumi-machinery.md#failure-codes). So UNKNOWN answers only a failure whose
 * outcome really is unknown, and INTERNAL one the provider did not foresee; a definite failure (refused,
 * nothing made or changed beyond what its message says) answers a code that names why. A resource that
 * exists but could not be finished carries ErrorResourceInitFailed, which the engine reads before the code.
 * docs/failure-behaviour.md#what-the-engine-is-told shows this table to users.
 */
import { status } from "@grpc/grpc-js";
import {
  AuthenticationError,
  BusinessError,
  ConnectionError,
  EndpointNotFoundError,
  EngineRejectionError,
  GpuCloudError,
  InputValidationError,
  NotFoundError,
  OutcomeUnknownError,
  PermissionDeniedError,
  RateLimitError,
  ResponseTooLargeError,
  ServerError,
  TimeoutError,
  UnendingListError,
  UnreadableAnswerError,
} from "../sdk";
import { AmbiguousMatchError, NoMatchError } from "./datasources/errors";
import { OperationCancelledError, UnsettledOutcomeError } from "./framework/errors";
import { InitFailedError, InputsRefusedError, RpcError } from "./native/errors";
import { PowerChangeNotTakenError } from "./resources/instance/power";
import { ConfigurationError } from "./settings";

export interface FailureCode {
  // Any error class, whatever its constructor takes.
  failure: abstract new (...args: never[]) => Error;
  code: status;
  /** What the failure says of the cloud, as the docs' table says it. */
  meaning: string;
}

export const FAILURE_CODES: readonly FailureCode[] = [
  {
    failure: InitFailedError,
    code: status.UNKNOWN,
    meaning:
      "the resource exists but could not be finished, or a create's outcome is recorded as pending; ErrorResourceInitFailed carries its id and outputs, and the state keeps it",
  },
  {
    failure: UnsettledOutcomeError,
    code: status.UNKNOWN,
    meaning: "a call that may have acted left no readable answer and the cloud has not shown what it did",
  },
  {
    failure: OutcomeUnknownError,
    code: status.UNKNOWN,
    meaning: "a call that is not safe to repeat reached the cloud and its outcome is not known",
  },
  {
    failure: OperationCancelledError,
    code: status.CANCELLED,
    meaning: "Cancel (Ctrl-C) stopped the operation; its message says what it had done",
  },
  {
    failure: InputsRefusedError,
    code: status.INVALID_ARGUMENT,
    meaning: "a component's inputs break its rules; nothing was registered",
  },
  {
    failure: InputValidationError,
    code: status.INVALID_ARGUMENT,
    meaning: "an input breaks the API's rules; nothing was sent",
  },
  {
    failure: AmbiguousMatchError,
    code: status.INVALID_ARGUMENT,
    meaning: "a function's name or title matches several catalogue entries",
  },
  {
    failure: ConfigurationError,
    code: status.FAILED_PRECONDITION,
    meaning: "a setting is missing or wrong (the key, the base URL); nothing was changed",
  },
  {
    failure: AuthenticationError,
    code: status.UNAUTHENTICATED,
    meaning: "the cloud refused the API key; nothing was done",
  },
  {
    failure: PermissionDeniedError,
    code: status.PERMISSION_DENIED,
    meaning: "the cloud refused the call to this key; nothing was done",
  },
  {
    failure: NotFoundError,
    code: status.NOT_FOUND,
    meaning: "the cloud said the resource does not exist (or is another user's)",
  },
  {
    failure: NoMatchError,
    code: status.NOT_FOUND,
    meaning: "a function found no catalogue entry of the name or title asked for",
  },
  {
    failure: RateLimitError,
    code: status.RESOURCE_EXHAUSTED,
    meaning: "the cloud's rate limit turned the call away, longer than the call may wait; nothing was done",
  },
  {
    failure: BusinessError,
    code: status.FAILED_PRECONDITION,
    meaning: "the cloud refused the call (the balance too low, a rule of the API); nothing was made",
  },
  {
    failure: EngineRejectionError,
    code: status.FAILED_PRECONDITION,
    meaning: "the cloud's workflow engine refused the call; nothing was run",
  },
  {
    failure: TimeoutError,
    code: status.DEADLINE_EXCEEDED,
    meaning: "a wait ran out (waitTimeoutSeconds) or the cloud did not answer a call that is safe to repeat",
  },
  {
    failure: PowerChangeNotTakenError,
    code: status.UNAVAILABLE,
    meaning:
      "both calls of a power change lost their answers, and the instance shows that neither took effect: nothing changed",
  },
  {
    failure: ConnectionError,
    code: status.UNAVAILABLE,
    meaning: "the cloud could not be reached, for a call that is safe to repeat; run the command again",
  },
  {
    failure: ServerError,
    code: status.UNAVAILABLE,
    meaning: "the cloud kept failing (HTTP 5xx) a call that is safe to repeat; run the command again",
  },
  {
    failure: UnreadableAnswerError,
    code: status.UNAVAILABLE,
    meaning: "the cloud's answers to a call that is safe to repeat could not be read; run the command again",
  },
  {
    failure: EndpointNotFoundError,
    code: status.FAILED_PRECONDITION,
    meaning: "the base URL does not serve the API",
  },
  {
    failure: ResponseTooLargeError,
    code: status.FAILED_PRECONDITION,
    meaning: "an answer to a call that is safe to repeat was larger than the client reads",
  },
  {
    failure: UnendingListError,
    code: status.FAILED_PRECONDITION,
    meaning: "a list did not end within the page bound",
  },
  {
    failure: GpuCloudError,
    code: status.FAILED_PRECONDITION,
    meaning: "the base URL answers, but not as the API does",
  },
];

/**
 * The provider's own verdict, a plain Error: it says what was done and what was not (an adoption that
 * does not match, a wait the instance left by stopping, a create destroyed after it failed). One made of a
 * failure it explains names that failure as its `cause`, and answers as the cause does.
 */
const VERDICT = status.FAILED_PRECONDITION;

/** Whatever else was thrown is a fault of the provider's own: how far it got is not known. */
const UNFORESEEN = status.INTERNAL;

function tableCode(err: unknown): status | undefined {
  return FAILURE_CODES.find(({ failure }) => err instanceof failure)?.code;
}

function isVerdict(err: unknown): err is Error {
  return err instanceof Error && Object.getPrototypeOf(err) === Error.prototype;
}

/** The code `err` answers with (see FAILURE_CODES); an RpcError's is its own. */
export function failureCode(err: unknown): status {
  if (err instanceof RpcError) return err.code;
  const listed = tableCode(err);
  if (listed !== undefined) return listed;
  if (!isVerdict(err)) return UNFORESEEN;
  return tableCode(err.cause) ?? (isVerdict(err.cause) ? failureCode(err.cause) : VERDICT);
}
