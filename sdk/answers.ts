/**
 * What an HTTP answer means. The body is read in every shape the service is documented or seen to send,
 * and one table, ANSWER_MEANINGS, turns a failed answer into an error class with why and what to do.
 *
 * Body shapes (the API's documented errors, and the variants public clients of the live service tolerate):
 * - envelope: `{code, msg, data?}`, code 0 success, -1, 1, 2 or -2, sent as a number or a numeric string;
 * - alt: `{code: <an HTTP status>, message, data: {error, details, field}}`;
 * - error object: `{"error": "..."}` or `{"error": {"message": "..."}}`;
 * - anything else: JSON without code or error, JSON that breaks off, an HTML page, text, an empty body,
 *   or a body the client cannot decode (compressed without saying so, or in a coding it does not read).
 * A business failure may come as HTTP 4xx or as HTTP 200 with a non-zero code: both read the same.
 * An HTTP 2xx answer in none of the API's shapes cannot be read: the call may have been carried out.
 */
import {
  AuthenticationError,
  BusinessError,
  EndpointNotFoundError,
  EngineRejectionError,
  GpuCloudError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  redact,
  ServerError,
  UnreadableAnswerError,
  type ErrorContext,
  type GpuCloudErrorInit,
} from "./errors";
import { terminalSafe } from "./terminal-safe";
import { isRecord } from "./validation";

export type BodyShape =
  | "envelope"
  | "alt"
  | "error_object"
  | "other_json"
  | "broken_json"
  | "html"
  | "text"
  | "empty"
  | "undecodable";

export interface EngineRejection {
  reason?: string;
  detail?: string;
  engineCode?: string;
  statusCode?: number;
}

/** One HTTP answer, read. */
export interface Answer {
  status: number;
  shape: BodyShape;
  /** The envelope or alt code as a number (a numeric string is read as its number). */
  code?: number;
  apiMessage?: string;
  details?: string;
  field?: string;
  // docs/design/cloud-api.md#workflow-submit-failures
  /** The workflow engine's rejection. */
  engine?: EngineRejection;
  /** The title of an HTML page, or the start of a text body, for messages. */
  excerpt?: string;
}

export interface AnswerInput {
  status: number;
  /** The body parsed as JSON; undefined when it is not JSON. */
  body: unknown;
  /** The raw body text (used when it is not JSON). */
  text?: string;
  /** Why the body could not be decoded from its Content-Encoding, when it could not: then there is no text. */
  undecodable?: string;
}

/** The most of the server's own words a message quotes (its msg and details, an engine's reason). */
const MAX_SHOWN_CHARS = 300;
/** The most of an identifier of the server's a message quotes (an engine code, a field name). */
const MAX_NAME_CHARS = 60;
/** How far into a body that is not JSON its HTML title or first words are looked for. */
const EXCERPT_SCAN_CHARS = 64 * 1024;

function str(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

/** A code sent as a number or as a numeric string ("0", "-1"); anything else is no code. */
function codeOf(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isInteger(value) ? value : undefined;
  if (typeof value === "string" && /^\s*-?\d{1,6}\s*$/.test(value)) return Number(value);
  return undefined;
}

function errorObjectMessage(error: unknown): string | undefined {
  if (isRecord(error)) return str(error.message) ?? str(error.msg);
  return str(error);
}

function readText(status: number, text: string | undefined): Answer {
  const trimmed = text?.slice(0, EXCERPT_SCAN_CHARS).replace(/\s+/g, " ").trim() ?? "";
  if (trimmed === "") return { status, shape: "empty" };
  if (trimmed.startsWith("<")) {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(trimmed)?.[1]?.trim();
    return { status, shape: "html", ...(title ? { excerpt: terminalSafe(title, 80) } : {}) };
  }
  // A body that opens as JSON and does not parse: cut off on its way (or never valid). None of it is
  // quoted: what it holds may be a secret (an SSH password) that no redaction knows of.
  if (/^[{[]/.test(trimmed)) return { status, shape: "broken_json", excerpt: `${text?.length} characters` };
  return { status, shape: "text", excerpt: terminalSafe(trimmed, 120) };
}

export function readAnswer({ status, body, text, undecodable }: AnswerInput): Answer {
  if (undecodable !== undefined) return { status, shape: "undecodable", excerpt: undecodable };
  if (body === undefined) return readText(status, text);
  if (!isRecord(body)) return { status, shape: "other_json" };
  const code = codeOf(body.code);
  const shape: BodyShape =
    code !== undefined
      ? code >= 100 && code <= 599
        ? "alt"
        : "envelope"
      : Object.hasOwn(body, "error")
        ? "error_object"
        : "other_json";
  const answer: Answer = {
    status,
    shape,
    code,
    apiMessage: str(body.msg) ?? str(body.message) ?? errorObjectMessage(body.error),
  };
  const data = isRecord(body.data) ? body.data : undefined;
  if (isRecord(data?.error)) {
    const e = data.error;
    answer.engine = {
      reason: str(e.reason),
      detail: str(e.detail),
      engineCode: str(e.engine_code),
      statusCode: typeof e.status_code === "number" ? e.status_code : undefined,
    };
  } else if (data) {
    answer.details = str(data.details);
    answer.field = str(data.field);
  }
  return answer;
}

export function isSuccess(answer: Answer): boolean {
  return answer.status === 200 && answer.shape === "envelope" && answer.code === 0;
}

/**
 * An HTTP 2xx answer in none of the API's shapes (an HTML page, text, JSON that breaks off or lacks the
 * envelope, a body that cannot be decoded): it passed whatever stands before the cloud, so the call may
 * have been carried out, and nothing in it says whether it was.
 */
export function isUnreadable(answer: Answer): boolean {
  return answer.status >= 200 && answer.status <= 299 && !isApiShaped(answer);
}

/**
 * The HTTP status the retry policy judges: an alt body inside an HTTP 200 carries its real status in its
 * code, and envelope code -2 (system error) counts as a 500. Other HTTP 200 failures are never retried.
 */
export function retryStatusOf(answer: Answer): number {
  if (answer.status !== 200) return answer.status;
  if (answer.shape === "alt" && answer.code !== undefined) return answer.code;
  return answer.code === -2 ? 500 : 200;
}

/** The HTTP status the answer means, whether it came as the status or as an alt code inside a 200. */
function meantStatus(a: Answer): number {
  return a.status === 200 && a.shape === "alt" && a.code !== undefined ? a.code : a.status;
}

/**
 * A message saying the resource is missing, in English or Chinese (public clients of the live service
 * see both). Kept narrow on purpose: whatever matches here on an HTTP 200 is reported as gone.
 */
const SAYS_MISSING = /not found|not exist|no such|不存在|未找到/i;

function isMissingResource(a: Answer): boolean {
  if (a.shape !== "envelope" || (a.code !== -1 && a.code !== 1)) return false;
  return a.status === 404 || (a.status === 200 && SAYS_MISSING.test(a.apiMessage ?? ""));
}

function isApiShaped(a: Answer): boolean {
  return a.shape === "envelope" || a.shape === "alt" || a.shape === "error_object";
}

// --- how messages describe things -------------------------------------------------------------------

/** What the server said (its msg and details), escaped and cut, for a message. */
function said(a: Answer): string {
  const parts = [a.apiMessage, a.details && a.details !== a.apiMessage ? a.details : undefined];
  return terminalSafe(parts.filter(Boolean).join(": ") || "no message", MAX_SHOWN_CHARS);
}

/** What the body was, for a message: an HTML page ("Bad Gateway"), an empty body. */
export function describeBody(a: Answer): string {
  switch (a.shape) {
    case "html":
      return a.excerpt ? `an HTML page ("${a.excerpt}")` : "an HTML page";
    case "text":
      return `text ("${a.excerpt}")`;
    case "empty":
      return "an empty body";
    case "broken_json":
      return `JSON that breaks off or does not parse (${a.excerpt})`;
    case "undecodable":
      return `a body it could not decode (${a.excerpt})`;
    case "alt":
      return `a not-found for a path it does not serve (${said(a)})`;
    default:
      return "JSON without the API's code and msg";
  }
}

function statusAndCode(a: Answer): string {
  return a.code === undefined ? `HTTP ${a.status}` : `HTTP ${a.status}, code ${a.code}`;
}

/** A wait in the largest unit that keeps it readable: "45 s", "12 min", "3 h", "40 days", "31 years". */
export function formatWait(ms: number): string {
  const s = ms / 1000;
  if (!Number.isFinite(s)) return "an unbounded time";
  // Under a second in ms: "1 s" for a 500 ms limit would read as equal to a 1 s wait it refused.
  if (s < 1) return `${Math.max(0, Math.ceil(ms))} ms`;
  if (s < 90) return `${Math.ceil(s)} s`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min`;
  if (s < 48 * 3600) return `${Math.round(s / 3600)} h`;
  if (s < 730 * 86400) return `${Math.round(s / 86400)} days`;
  const years = Math.round(s / (365.25 * 86400));
  return years < 10_000 ? `${years} years` : "more than 10000 years";
}

/** " (until 2026-05-01T12:00:00.000Z)", or nothing when the time is past any calendar. */
function until(epochMs: number): string {
  const date = new Date(epochMs);
  return Number.isNaN(date.getTime()) ? "" : ` (until ${date.toISOString()})`;
}

/** What bounded a wait: the call's own deadline, or the client's cap on one rate-limit wait. */
export interface WaitLimit {
  ms: number;
  by: "deadline" | "maxRateLimitWaitMs";
}

function describeLimit(limit: WaitLimit): string {
  const what = limit.by === "deadline" ? "its deadline" : "maxRateLimitWaitMs";
  return `${formatWait(limit.ms)}, ${what}`;
}

function retryLater(limit: WaitLimit): string {
  return limit.by === "maxRateLimitWaitMs"
    ? "Try again after that time, or raise maxRateLimitWaitMs."
    : "Try again after that time.";
}

// --- the table ----------------------------------------------------------------------------------------

export interface ResponseErrorInput extends ErrorContext, AnswerInput {
  /** The full URL requested, for messages about a wrong address. */
  url?: string;
  /** Retry-After, in ms. */
  retryAfterMs?: number;
  /** When the answer arrived (epoch ms), to say until when Retry-After lasts. Default now. */
  receivedAt?: number;
  /** Set when Retry-After outlasts what the call may wait: that limit. */
  waitLimit?: WaitLimit;
  secret?: string;
}

type ErrorInit = GpuCloudErrorInit & {
  url?: string;
  retryAfterMs?: number;
  tooLongToWait?: boolean;
  engineCode?: string;
  detail?: string;
  engineStatusCode?: number;
};

interface Meaning {
  /** The condition, in words. */
  when: string;
  matches: (a: Answer) => boolean;
  error: new (init: ErrorInit) => GpuCloudError;
  why: (a: Answer, input: ResponseErrorInput) => string;
  next: (a: Answer, input: ResponseErrorInput) => string;
}

const FIX_BASE_URL =
  "Check baseUrl: it must be the service root (for example https://HOST), without /api/open/v2, which the client appends itself.";

/** First match wins: each row is more specific than the rows after it. */
export const ANSWER_MEANINGS: readonly Meaning[] = [
  {
    when: "the workflow engine rejected a submission (data.error with engine_code or reason)",
    matches: (a) => Boolean(a.engine?.engineCode || a.engine?.reason),
    error: EngineRejectionError,
    why: (a) => {
      const e = a.engine ?? {};
      const reason = e.reason ? terminalSafe(e.reason, MAX_SHOWN_CHARS) : said(a);
      const code = e.engineCode ? ` [${terminalSafe(e.engineCode, MAX_NAME_CHARS)}]` : "";
      const detail = e.detail ? ` - ${terminalSafe(e.detail, MAX_SHOWN_CHARS)}` : "";
      return `the workflow engine rejected it: ${reason}${code}${detail}`;
    },
    next: () =>
      "Check the inputs against the workflow's editable_parameter_manifest and submit again with a new idempotency_key.",
  },
  {
    when: "HTTP 401, or code 2 (not logged in)",
    matches: (a) => meantStatus(a) === 401 || (a.shape === "envelope" && a.code === 2),
    error: AuthenticationError,
    why: (a) => `the API did not accept the credentials: ${said(a)}`,
    next: () =>
      "Check the API key (gpucloud:apiKey or GPUCLOUD_API_KEY): it may be missing, mistyped, disabled or deleted.",
  },
  {
    when: "HTTP 403",
    matches: (a) => meantStatus(a) === 403,
    error: PermissionDeniedError,
    why: (a) => `the API key lacks permission: ${said(a)}`,
    next: () => "Use a key whose permission range covers this operation.",
  },
  {
    when: "HTTP 429 (Retry-After says how long to wait)",
    matches: (a) => meantStatus(a) === 429,
    error: RateLimitError,
    why: (a, input) => {
      const asked =
        input.retryAfterMs === undefined
          ? ""
          : ` and asked to wait ${formatWait(input.retryAfterMs)}${until((input.receivedAt ?? Date.now()) + input.retryAfterMs)}`;
      return `the API is rate limiting this key${asked}: ${said(a)}`;
    },
    next: (_a, input) => {
      if (input.waitLimit) {
        return `That is longer than this call may wait (${describeLimit(input.waitLimit)}), so it was not retried. ${retryLater(input.waitLimit)}`;
      }
      const when = input.retryAfterMs === undefined ? "later" : `after ${formatWait(input.retryAfterMs)}`;
      return `Send fewer requests and try again ${when}.`;
    },
  },
  {
    when: "the API's answer for a path it does not serve (alt shape with code 404)",
    matches: (a) => a.shape === "alt" && a.code === 404,
    error: EndpointNotFoundError,
    why: (a, input) =>
      `${input.url ?? input.path} is not an endpoint of API v2: it answered ${describeBody(a)}`,
    next: () => FIX_BASE_URL,
  },
  {
    when: "HTTP 404 that is not the API's envelope (HTML, text, JSON without code)",
    matches: (a) => a.status === 404 && a.shape !== "envelope",
    error: EndpointNotFoundError,
    why: (a, input) =>
      `${input.url ?? input.path} answered with ${describeBody(a)}, not as API v2 answers for a missing resource`,
    next: () => `This says nothing about whether the resource exists. ${FIX_BASE_URL}`,
  },
  {
    when: "the API's own missing-resource answer: HTTP 404 with code -1 or 1, or HTTP 200 with code -1 or 1 saying not found",
    matches: isMissingResource,
    error: NotFoundError,
    why: (a) => `it does not exist: ${said(a)}`,
    next: () =>
      "Check the id; the resource may have been deleted, expired, or belong to another API key's user.",
  },
  {
    when: "HTTP 5xx, or code -2 (system error)",
    matches: (a) => meantStatus(a) >= 500 || (a.shape === "envelope" && a.code === -2),
    error: ServerError,
    why: (a) => `the service failed: ${said(a)}`,
    next: (_a, input) =>
      input.waitLimit && input.retryAfterMs !== undefined
        ? `It asked to wait ${formatWait(input.retryAfterMs)}${until((input.receivedAt ?? Date.now()) + input.retryAfterMs)}, longer than this call may wait (${describeLimit(input.waitLimit)}), so it was not retried. ${retryLater(input.waitLimit)}`
        : "This is the service's fault, not the request's; try again later.",
  },
  {
    when: "an HTTP 2xx answer that cannot be read (HTML, text, empty, broken or undecodable, JSON without code)",
    matches: isUnreadable,
    error: UnreadableAnswerError,
    why: (a, input) =>
      `${input.url ?? input.path} answered with ${describeBody(a)}, not the {code, msg, data} envelope of API v2`,
    next: () =>
      "Check that baseUrl is the service root of a service that speaks API v2 (the client appends /api/open/v2); a proxy, gateway or captive portal may be answering instead, or cutting the answer short.",
  },
  {
    when: "an answer that is not the API's (HTML, text, empty, JSON without code or error)",
    matches: (a) => !isApiShaped(a),
    error: GpuCloudError,
    why: (a, input) =>
      `${input.url ?? input.path} answered with ${describeBody(a)}, not the {code, msg, data} envelope of API v2`,
    next: () =>
      "Check that baseUrl is the service root of a service that speaks API v2 (the client appends /api/open/v2); a proxy or captive portal may be answering instead.",
  },
  {
    when: "any other refusal: HTTP 4xx, HTTP 200 with a non-zero code, or an error body",
    matches: () => true,
    error: BusinessError,
    why: (a) =>
      `the API refused it: ${said(a)}${a.field ? ` (field ${terminalSafe(a.field, MAX_NAME_CHARS)})` : ""}`,
    next: () => "Fix the request or the resource's state and try again.",
  },
];

/** `value` with the secret replaced in every string it holds, at any depth. */
function redactStrings(value: unknown, secret: string): unknown {
  if (typeof value === "string") return redact(value, secret);
  if (Array.isArray(value)) return value.map((item) => redactStrings(item, secret));
  if (!isRecord(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactStrings(item, secret)]));
}

/**
 * The answer with the secret taken out of the server's text before anything quotes it: a quote cut
 * short could otherwise keep part of an echoed key, where the redaction of the message no longer finds it.
 */
function withoutSecret(input: ResponseErrorInput): AnswerInput {
  const { status, body, text, undecodable, secret } = input;
  if (!secret) return input;
  return {
    status,
    body: redactStrings(body, secret),
    text: text === undefined ? undefined : redact(text, secret),
    undecodable,
  };
}

/** The one place an HTTP answer that is not a success becomes an error. */
export function errorFromResponse(input: ResponseErrorInput): GpuCloudError {
  const a = readAnswer(withoutSecret(input));
  const meaning = ANSWER_MEANINGS.find((m) => m.matches(a)) ?? ANSWER_MEANINGS[ANSWER_MEANINGS.length - 1];
  const message = `Could not ${input.action}: ${meaning.why(a, input)} (${statusAndCode(a)}). ${meaning.next(a, input)}`;
  return new meaning.error({
    action: input.action,
    method: input.method,
    path: input.path,
    status: input.status,
    code: a.code,
    apiMessage: a.apiMessage,
    message: redact(message, input.secret),
    url: input.url,
    retryAfterMs: input.retryAfterMs,
    tooLongToWait: input.waitLimit !== undefined,
    engineCode: a.engine?.engineCode,
    detail: a.engine?.detail,
    engineStatusCode: a.engine?.statusCode,
  });
}

export interface TurnedAwayInput extends ErrorContext {
  /** Epoch ms when the caller could have been let through. */
  heldUntil: number;
  /** Epoch ms when the cloud's latest Retry-After ends, if a 429 pause held the caller. */
  askedUntil?: number;
  limit: WaitLimit;
  now: number;
  secret?: string;
}

/**
 * A call that the client did not send because an earlier 429 (or the pacing that followed it) would have
 * held it past what it may wait: the same refusal as the 429 row above, relayed without a request.
 */
export function rateLimitTurnedAway(input: TurnedAwayInput): RateLimitError {
  const askedMs = input.askedUntil === undefined ? undefined : input.askedUntil - input.now;
  const why =
    askedMs === undefined
      ? `the client is pacing its requests after the API's 429s, and this call's turn comes in ${formatWait(input.heldUntil - input.now)}`
      : `the API is rate limiting this key and an earlier answer asked to wait ${formatWait(askedMs)} more${until(input.askedUntil ?? 0)}`;
  const next =
    askedMs === undefined
      ? "Give the operation more time or send fewer requests at once."
      : retryLater(input.limit);
  const message = `Could not ${input.action}: ${why}, longer than this call may wait (${describeLimit(input.limit)}); nothing was sent. ${next}`;
  return new RateLimitError({
    action: input.action,
    method: input.method,
    path: input.path,
    retryAfterMs: askedMs,
    tooLongToWait: true,
    message: redact(message, input.secret),
  });
}
