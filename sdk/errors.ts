/**
 * The one error hierarchy of the client. Every error that comes from a transport failure, a failed input
 * check or an answer the client cannot use is built here or in answers.ts (the table that turns an HTTP
 * answer into one of these classes), so messages keep one shape: what failed, why, and what to do next.
 * Messages never carry the API key (see `redact`).
 */

export interface ErrorContext {
  /** What the caller was doing, as a verb phrase: "create instance", "read workflow run". */
  action: string;
  method: string;
  /** Path relative to the API base, query string included. */
  path: string;
}

export interface GpuCloudErrorInit extends ErrorContext {
  message: string;
  status?: number;
  code?: number;
  apiMessage?: string;
  cause?: unknown;
}

export class GpuCloudError extends Error {
  readonly status?: number;
  readonly code?: number;
  readonly apiMessage?: string;
  readonly method: string;
  readonly path: string;
  readonly action: string;

  constructor(init: GpuCloudErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.apiMessage = init.apiMessage;
    this.method = init.method;
    this.path = init.path;
    this.action = init.action;
  }
}

export class AuthenticationError extends GpuCloudError {}
export class PermissionDeniedError extends GpuCloudError {}
/** The API's own answer that the resource does not exist (or belongs to another user): it is gone. */
export class NotFoundError extends GpuCloudError {}
export class ServerError extends GpuCloudError {}
export class BusinessError extends GpuCloudError {}
export class ConnectionError extends GpuCloudError {}
/**
 * A call that is not safe to repeat reached the service and its outcome is not known; when it came of
 * an answer the client could not read (too large, an HTML page, cut short, not as documented), `cause`
 * is that ResponseTooLargeError or UnreadableAnswerError.
 */
export class OutcomeUnknownError extends GpuCloudError {}

/**
 * An HTTP 2xx answer the client cannot read: an HTML page (a gateway's, a captive portal's), text, JSON
 * that breaks off or lacks the envelope, a body compressed without saying so, or success data without a
 * field API v2 requires. Such an answer passed whatever stands before the cloud, so the call may have
 * been carried out: a read or an idempotent write is asked again (retry-policy.ts), and a call that is
 * not safe to repeat fails with OutcomeUnknownError, this error its `cause`. Transient, like a 5xx: such
 * answers come of what stands between the client and the cloud, and a long wait rides them out until its
 * own deadline.
 */
export class UnreadableAnswerError extends GpuCloudError {}

/**
 * An answer larger than the client reads of one answer (the client's maxResponseBytes): its status
 * line came, its body was not read. Asking again brings the same answer, so it is never retried; for a
 * call that is not safe to repeat it is the `cause` of an OutcomeUnknownError instead.
 */
export class ResponseTooLargeError extends GpuCloudError {
  /** The cap it passed: the client's maxResponseBytes. */
  readonly limitBytes: number;
  /** The size its Content-Length announced, when it announced one above the cap. */
  readonly announcedBytes?: number;
  /** Its Content-Encoding, when it passed the cap as it was decoded (a compressed answer, a gzip bomb). */
  readonly coding?: string;
  constructor(init: GpuCloudErrorInit & { limitBytes: number; announcedBytes?: number; coding?: string }) {
    super(init);
    this.limitBytes = init.limitBytes;
    this.announcedBytes = init.announcedBytes;
    this.coding = init.coding;
  }
}

/**
 * The URL answered 404 but not as the API does for a missing resource (an HTML page, text, JSON without
 * the envelope, or the API's unknown-path answer): baseUrl is wrong. Deliberately not a NotFoundError,
 * so nothing that treats "not found" as "gone" mistakes a wrong address for a deleted resource.
 */
export class EndpointNotFoundError extends GpuCloudError {
  /** The full URL that was requested. */
  readonly url: string;
  constructor(init: GpuCloudErrorInit & { url?: string }) {
    super(init);
    this.url = init.url ?? init.path;
  }
}

/**
 * A list walk reached its page bound (maxPages) with the list still going: every page came back full.
 * The pages read are not taken for the whole list. Not transient: the next walk meets the same list.
 */
export class UnendingListError extends GpuCloudError {
  /** The bound it reached. */
  readonly pages: number;
  constructor(init: GpuCloudErrorInit & { pages: number }) {
    super(init);
    this.pages = init.pages;
  }
}

export class RateLimitError extends GpuCloudError {
  /** How long the cloud asked to wait (Retry-After), in ms. */
  readonly retryAfterMs?: number;
  /**
   * The cloud asked for a longer wait than this call may take (its deadline or the client's
   * maxRateLimitWaitMs): trying again before then is pointless, so this is not a transient error.
   */
  readonly tooLongToWait: boolean;
  constructor(init: GpuCloudErrorInit & { retryAfterMs?: number; tooLongToWait?: boolean }) {
    super(init);
    this.retryAfterMs = init.retryAfterMs;
    this.tooLongToWait = init.tooLongToWait ?? false;
  }
}

export class EngineRejectionError extends GpuCloudError {
  readonly engineCode?: string;
  readonly detail?: string;
  readonly engineStatusCode?: number;
  constructor(init: GpuCloudErrorInit & { engineCode?: string; detail?: string; engineStatusCode?: number }) {
    super(init);
    this.engineCode = init.engineCode;
    this.detail = init.detail;
    this.engineStatusCode = init.engineStatusCode;
  }
}

export class TimeoutError extends GpuCloudError {
  /** For waiters: the last state observed before giving up. */
  readonly lastSeen?: string;
  constructor(init: GpuCloudErrorInit & { lastSeen?: string }) {
    super(init);
    this.lastSeen = init.lastSeen;
  }
}

/**
 * The service was briefly unreachable, overloaded or slow: trying the same thing again later may well
 * succeed. Long waits and cleanups keep going through these until their own deadline. A rate limit
 * whose Retry-After outlasts what the call may wait is not one: the cloud said no attempt before then
 * will succeed.
 */
export function isTransientError(err: unknown): err is GpuCloudError {
  return (
    err instanceof ConnectionError ||
    err instanceof ServerError ||
    err instanceof UnreadableAnswerError ||
    (err instanceof RateLimitError && !err.tooLongToWait) ||
    err instanceof TimeoutError
  );
}

/** Replaces every occurrence of the secret (the API key), should a message or an echo carry it. */
export function redact(text: string, secret: string | undefined): string {
  if (!secret) return text;
  return text.split(secret).join("<redacted>");
}

export interface InputIssue {
  field: string;
  reason: string;
}

export class InputValidationError extends GpuCloudError {
  readonly issues: InputIssue[];
  constructor(init: GpuCloudErrorInit & { issues: InputIssue[] }) {
    super(init);
    this.issues = init.issues;
  }
}

export interface FailureErrorInput extends ErrorContext {
  kind: "not_sent" | "lost" | "timeout";
  detail: string;
  /** The service's origin (scheme, host and port; never credentials), shown where it could not be reached. */
  origin?: string;
  timeoutMs?: number;
  secret?: string;
}

/** A request that got no HTTP answer at all. */
export function errorFromFailure(input: FailureErrorInput): GpuCloudError {
  const base = { action: input.action, method: input.method, path: input.path };
  const what = `Could not ${input.action}`;
  if (input.kind === "timeout") {
    return new TimeoutError({
      ...base,
      message: redact(
        `${what}: no answer within ${input.timeoutMs} ms (${input.method} ${input.path}). The service may be slow or unreachable; try again, or raise the per-request timeout (timeoutMs; gpucloud:requestTimeoutMs in the provider).`,
        input.secret,
      ),
    });
  }
  const why =
    input.kind === "not_sent"
      ? "could not reach the API"
      : "the connection was lost before an answer arrived";
  return new ConnectionError({
    ...base,
    message: redact(
      `${what}: ${why}${input.origin ? ` at ${input.origin}` : ""} (${input.detail}). Check the base URL ` +
        "(gpucloud:baseUrl or GPUCLOUD_BASE_URL; baseUrl when using the SDK's client directly) and the network, then try again.",
      input.secret,
    ),
  });
}

export interface TooLargeInput extends ErrorContext {
  status: number;
  limitBytes: number;
  announcedBytes?: number;
  /** The Content-Encoding it came in, when it passed the cap as it was decoded. */
  coding?: string;
  secret?: string;
}

/** A size in bytes as people read it: "67108864 bytes (64 MiB)". */
function describeBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  const rounded = mib >= 10 ? Math.round(mib) : Math.round(mib * 10) / 10;
  return mib >= 1 ? `${bytes} bytes (${rounded} MiB)` : `${bytes} bytes`;
}

/**
 * How a message names an answer that passed the cap, the same for a ResponseTooLargeError and for the
 * OutcomeUnknownError it causes: "the answer to GET /x (HTTP 200) is larger than ... (maxResponseBytes)".
 */
export function tooLargeAnswer(
  answer: Pick<TooLargeInput, "method" | "path" | "limitBytes" | "announcedBytes" | "coding"> & {
    status?: number;
  },
): string {
  const announced =
    answer.announcedBytes === undefined ? "" : `, announced as ${describeBytes(answer.announcedBytes)}`;
  const coded = answer.coding === undefined ? "" : `, ${answer.coding}-encoded`;
  const decoded = answer.coding === undefined ? "" : " once decoded";
  return (
    `the answer to ${answer.method} ${answer.path} (HTTP ${answer.status}${announced}${coded}) is larger than ` +
    `${describeBytes(answer.limitBytes)}${decoded}, the most the client reads of one answer (maxResponseBytes)`
  );
}

/** A safe call's answer that passed the client's cap: final, with what to check and which option to raise. */
export function responseTooLarge(input: TooLargeInput): ResponseTooLargeError {
  return new ResponseTooLargeError({
    action: input.action,
    method: input.method,
    path: input.path,
    status: input.status,
    limitBytes: input.limitBytes,
    announcedBytes: input.announcedBytes,
    coding: input.coding,
    message: redact(
      `Could not ${input.action}: ${tooLargeAnswer(input)}, so it was not read and not asked for again. ` +
        "No answer of API v2 comes near that size: check that baseUrl points at the GPU cloud (a proxy or " +
        "another service may be answering). If the answer is this large on purpose, raise maxResponseBytes " +
        "(an option of the SDK's GpuCloudClient).",
      input.secret,
    ),
  });
}

export interface OutcomeUnknownInput extends ErrorContext {
  reason: string;
  status?: number;
  /** The envelope code and message of the answer, when one came. */
  code?: number;
  apiMessage?: string;
  reconcile: string;
  /** The failure that left the outcome unknown, when it is an error of its own (an answer not read). */
  cause?: GpuCloudError;
  secret?: string;
}

/** A non-idempotent request reached the service and its outcome is not known. */
export function outcomeUnknown(input: OutcomeUnknownInput): OutcomeUnknownError {
  return new OutcomeUnknownError({
    action: input.action,
    method: input.method,
    path: input.path,
    status: input.status,
    code: input.code,
    apiMessage: input.apiMessage,
    cause: input.cause,
    message: redact(
      `Could not ${input.action}: the request was sent but ${input.reason}, so it may or may not have been carried out. It was not retried, to avoid doing it twice. ${input.reconcile}`,
      input.secret,
    ),
  });
}

export function inputValidationError(ctx: ErrorContext, issues: InputIssue[]): InputValidationError {
  const listed = issues.map((i) => `${i.field}: ${i.reason}`).join("; ");
  const count = issues.length === 1 ? "1 input is invalid" : `${issues.length} inputs are invalid`;
  return new InputValidationError({
    ...ctx,
    issues,
    message: `Could not ${ctx.action}: ${count} (nothing was sent): ${listed}. Fix ${issues.length === 1 ? "it" : "them"} and try again.`,
  });
}

/** A walk that reached `pages` pages of `pageSize` with every page full. */
export function unendingList(input: ErrorContext & { pages: number; pageSize: number }): UnendingListError {
  const where = input.path === "" ? "" : ` (${input.method} ${input.path})`;
  return new UnendingListError({
    action: input.action,
    method: input.method,
    path: input.path,
    pages: input.pages,
    message:
      `Could not ${input.action}: the list did not end within ${input.pages} pages of ${input.pageSize}${where}: ` +
      "every page came back full, as from a service that ignores the page asked for. What was read is not " +
      "taken for the whole list. Check that baseUrl points at the GPU cloud; if the list really is this " +
      "long, raise maxPages.",
  });
}

export interface UnexpectedShapeInput extends ErrorContext {
  issues: string;
  secret?: string;
}

/** A success answer whose data does not match the documented shape. */
export function unexpectedShape(input: UnexpectedShapeInput): UnreadableAnswerError {
  return new UnreadableAnswerError({
    action: input.action,
    method: input.method,
    path: input.path,
    status: 200,
    code: 0,
    message: redact(
      `Could not ${input.action}: the API answered with data that does not match the documented API v2 (${input.issues}). Check that baseUrl points at a service that speaks API v2.`,
      input.secret,
    ),
  });
}

/** For deletes: a resource that is already gone counts as deleted; EndpointNotFoundError does not. */
export async function goneCountsAsDone(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
}
