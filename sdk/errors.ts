/**
 * The one error hierarchy of the client. Every error that comes from an HTTP answer (status + body), a
 * transport failure or a failed input check is built here, so messages keep one shape: what failed,
 * why, and what to do next. Messages never carry the API key (see `redact`).
 */
import { isRecord } from "./validation";

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
export class NotFoundError extends GpuCloudError {}
export class ServerError extends GpuCloudError {}
export class BusinessError extends GpuCloudError {}
export class ConnectionError extends GpuCloudError {}
export class OutcomeUnknownError extends GpuCloudError {}

export class RateLimitError extends GpuCloudError {
  readonly retryAfterMs?: number;
  constructor(init: GpuCloudErrorInit & { retryAfterMs?: number }) {
    super(init);
    this.retryAfterMs = init.retryAfterMs;
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
 * succeed. Long waits and cleanups keep going through these until their own deadline.
 */
export function isTransientError(err: unknown): err is GpuCloudError {
  return (
    err instanceof ConnectionError ||
    err instanceof ServerError ||
    err instanceof RateLimitError ||
    err instanceof TimeoutError
  );
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

/** The two error body shapes of api-v2.md "Errors": the envelope and the alt shape, read as one. */
export interface ParsedErrorBody {
  code?: number;
  apiMessage?: string;
  details?: string;
  field?: string;
  engine?: { reason?: string; detail?: string; engine_code?: string; status_code?: number };
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

export function parseErrorBody(body: unknown): ParsedErrorBody {
  if (!isRecord(body)) return {};
  const data = isRecord(body.data) ? body.data : undefined;
  const parsed: ParsedErrorBody = {
    code: typeof body.code === "number" ? body.code : undefined,
    apiMessage: str(body.msg) ?? str(body.message),
  };
  if (data) {
    if (isRecord(data.error)) {
      const e = data.error;
      parsed.engine = {
        reason: str(e.reason),
        detail: str(e.detail),
        engine_code: str(e.engine_code),
        status_code: typeof e.status_code === "number" ? e.status_code : undefined,
      };
    } else {
      parsed.details = str(data.details);
      parsed.field = str(data.field);
    }
  }
  return parsed;
}

const MAX_SHOWN_CHARS = 300;

export function redact(text: string, secret: string | undefined): string {
  if (!secret) return text;
  return text.split(secret).join("<redacted>");
}

function describeAnswer(status: number | undefined, parsed: ParsedErrorBody): string {
  const parts: string[] = [];
  if (status !== undefined) parts.push(`HTTP ${status}`);
  if (parsed.code !== undefined) parts.push(`code ${parsed.code}`);
  return parts.join(", ");
}

function apiSaid(parsed: ParsedErrorBody): string {
  const said = [
    parsed.apiMessage,
    parsed.details && parsed.details !== parsed.apiMessage ? parsed.details : undefined,
  ]
    .filter(Boolean)
    .join(": ");
  return said.length > MAX_SHOWN_CHARS ? `${said.slice(0, MAX_SHOWN_CHARS)}...` : said;
}

export interface ResponseErrorInput extends ErrorContext {
  status: number;
  body: unknown;
  retryAfterMs?: number;
  secret?: string;
}

/**
 * The one place an API answer becomes an error. HTTP status decides first (api-v2.md "HTTP status");
 * on HTTP 200 with a non-zero envelope code the code decides (api-v2.md "Envelope code").
 */
export function errorFromResponse(input: ResponseErrorInput): GpuCloudError {
  const parsed = parseErrorBody(input.body);
  const { status } = input;
  const what = `Could not ${input.action}`;
  const said = apiSaid(parsed) || "no message";
  const answer = describeAnswer(status, parsed);
  const base = {
    action: input.action,
    method: input.method,
    path: input.path,
    status,
    code: parsed.code,
    apiMessage: parsed.apiMessage,
  };
  const build = (why: string, next: string): string =>
    redact(`${what}: ${why} (${answer}). ${next}`, input.secret);

  if (parsed.engine && (parsed.engine.engine_code || parsed.engine.reason)) {
    const engineCode = parsed.engine.engine_code;
    const detail = parsed.engine.detail;
    const why = `the workflow engine rejected it: ${parsed.engine.reason ?? said}${engineCode ? ` [${engineCode}]` : ""}${detail ? ` - ${detail}` : ""}`;
    return new EngineRejectionError({
      ...base,
      message: build(
        why,
        "Check the inputs against the workflow's editable_parameter_manifest and submit again with a new idempotency_key.",
      ),
      engineCode,
      detail,
      engineStatusCode: parsed.engine.status_code,
    });
  }
  if (status === 401 || parsed.code === 2) {
    return new AuthenticationError({
      ...base,
      message: build(
        `the API did not accept the credentials: ${said}`,
        "Check the API key (gpucloud:apiKey or GPUCLOUD_API_KEY): it may be missing, mistyped, disabled or deleted.",
      ),
    });
  }
  if (status === 403) {
    return new PermissionDeniedError({
      ...base,
      message: build(
        `the API key lacks permission: ${said}`,
        "Use a key whose permission range covers this operation.",
      ),
    });
  }
  // CONTRACTS.md: a missing resource answers the envelope (code -1 or 1); the alt shape with code 404 is an unknown path.
  if (status === 404 && parsed.code === 404) {
    return new NotFoundError({
      ...base,
      message: build(
        `the API has no such endpoint: ${said}`,
        "Check that baseUrl is the service root (the client appends /api/open/v2) and that the service speaks API v2.",
      ),
    });
  }
  if (
    status === 404 ||
    (status === 200 && parsed.code === -1 && /not (found|exist)/i.test(parsed.apiMessage ?? ""))
  ) {
    return new NotFoundError({
      ...base,
      message: build(
        `it does not exist: ${said}`,
        "Check the id; the resource may have been deleted, expired, or belong to another API key's user.",
      ),
    });
  }
  if (status === 429) {
    const wait =
      input.retryAfterMs !== undefined ? ` after ${Math.ceil(input.retryAfterMs / 1000)} s` : " later";
    return new RateLimitError({
      ...base,
      retryAfterMs: input.retryAfterMs,
      message: build(
        `the API is rate limiting this key: ${said}`,
        `Send fewer requests and try again${wait}.`,
      ),
    });
  }
  if (status >= 500 || parsed.code === -2) {
    return new ServerError({
      ...base,
      message: build(
        `the service failed: ${said}`,
        "This is the service's fault, not the request's; try again later.",
      ),
    });
  }
  const field = parsed.field ? ` (field ${parsed.field})` : "";
  return new BusinessError({
    ...base,
    message: build(
      `the API refused it: ${said}${field}`,
      "Fix the request or the resource's state and try again.",
    ),
  });
}

export interface FailureErrorInput extends ErrorContext {
  kind: "not_sent" | "lost" | "timeout";
  detail: string;
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
        `${what}: no answer within ${input.timeoutMs} ms (${input.method} ${input.path}). The service may be slow or unreachable; try again or raise timeoutMs.`,
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
      `${what}: ${why} (${input.detail}). Check baseUrl and the network, then try again.`,
      input.secret,
    ),
  });
}

export interface OutcomeUnknownInput extends ErrorContext {
  reason: string;
  status?: number;
  body?: unknown;
  reconcile: string;
  secret?: string;
}

/** A non-idempotent request reached the service and its outcome is not known. */
export function outcomeUnknown(input: OutcomeUnknownInput): OutcomeUnknownError {
  const parsed = input.body === undefined ? {} : parseErrorBody(input.body);
  return new OutcomeUnknownError({
    action: input.action,
    method: input.method,
    path: input.path,
    status: input.status,
    code: parsed.code,
    apiMessage: parsed.apiMessage,
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

export interface UnexpectedShapeInput extends ErrorContext {
  issues: string;
  secret?: string;
}

/** A success answer whose data does not match the documented shape. */
export function unexpectedShape(input: UnexpectedShapeInput): GpuCloudError {
  return new GpuCloudError({
    action: input.action,
    method: input.method,
    path: input.path,
    status: 200,
    code: 0,
    message: redact(
      `Could not ${input.action}: the API answered with data that does not match api-v2.md (${input.issues}). Check that baseUrl points at a v2 service.`,
      input.secret,
    ),
  });
}

/** For deletes: a resource that is already gone counts as deleted (STYLE.md 4). */
export async function goneCountsAsDone(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
}
