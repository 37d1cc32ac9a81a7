/**
 * The shared transport: keep-alive connections per client (connections.ts), bearer auth, JSON in and
 * out, the envelope, per-request timeouts, the cap on what one answer may bring (decoded, when it came
 * compressed: content-coding.ts), retries per
 * retry-policy.ts, the client-wide pacing gate after 429s (pacing-gate.ts), the connection slots
 * (slots.ts), deadlines, the cloud's clock, and the onRequest hook. API areas call `call()` and nothing else.
 */
import type { Readable } from "node:stream";
import type { Dispatcher } from "undici";
import type { z } from "zod";
import {
  describeBody,
  errorFromResponse,
  isSuccess,
  isUnreadable,
  rateLimitTurnedAway,
  readAnswer,
  retryStatusOf,
  type ResponseErrorInput,
  type WaitLimit,
} from "./answers";
import { Connections } from "./connections";
import { decodeBody, DecodedTooLarge } from "./content-coding";
import {
  errorFromFailure,
  GpuCloudError,
  inputValidationError,
  outcomeUnknown,
  redact,
  responseTooLarge,
  ResponseTooLargeError,
  tooLargeAnswer,
  unexpectedShape,
  UnreadableAnswerError,
  type ErrorContext,
} from "./errors";
import { undici } from "./http-library";
import { PacingGate, type GatePass } from "./pacing-gate";
import {
  decide,
  NO_RETRIES_YET,
  parseRetryAfter,
  spend,
  type BackoffSettings,
  type CallSafety,
  type Failure,
} from "./retry-policy";
import { sleep, untilAborted } from "./sleep";
import { Slots } from "./slots";
import { isRecord } from "./validation";

export const API_PREFIX = "/api/open/v2";

/** One event per attempt. Never carries the API key or any header. */
export interface RequestEvent {
  method: string;
  /** Path relative to the API base, with its query string. */
  path: string;
  /** HTTP status, absent when no answer arrived. */
  status?: number;
  /** When the attempt went on the wire (Unix ms): it passed the pacing gate holding a free connection. */
  sentAt: number;
  /** From sentAt until the answer was handled (or the attempt failed), on the same clock. */
  durationMs: number;
  /** The Retry-After of a 429 answer, in ms. */
  retryAfterMs?: number;
  /** 1 for the first send of a call, 2 for its first retry, ... */
  attempt: number;
  /** How many resends of this call came before this attempt (attempt - 1). */
  retries: number;
  /** Error message when this attempt failed. */
  error?: string;
}

export interface TransportOptions {
  baseUrl: string;
  apiKey?: string;
  timeoutMs: number;
  maxRetries: number;
  backoff: BackoffSettings;
  /** The longest one rate-limit wait may last (a Retry-After, or the gate's pause after one). */
  maxRateLimitWaitMs: number;
  /** The most bytes read of one answer's body; a larger one fails the attempt unread. */
  maxResponseBytes: number;
  onRequest?: (event: RequestEvent) => void;
}

export interface RequestBody {
  body: string | Buffer | Readable;
  contentType: string;
  contentLength?: number;
}

export interface CallOptions {
  signal?: AbortSignal;
  /**
   * Epoch ms: no wait of this call (for a Retry-After, the pacing gate or a backoff) runs past it; a call
   * that would have to wait longer fails at once with the failure that made it wait. An attempt already
   * on the wire is not cut short (its timeout is the client's timeoutMs).
   */
  deadline?: number;
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface CallSpec<S extends z.ZodType> {
  method: "GET" | "POST";
  path: string;
  query?: Query;
  json?: unknown;
  /** Builds a fresh body for each attempt (multipart uploads). */
  body?: () => RequestBody;
  safety: CallSafety;
  /** Verb phrase for error messages: "create instance". */
  action: string;
  /** Schema of the envelope's `data`. */
  schema: S;
  maxRetries?: number;
  /** Overrides the client's per-request timeout for this call (uploads of large files). */
  timeoutMs?: number;
  /** What the caller should do when the outcome is unknown (unsafe calls). */
  reconcile?: string;
}

/** Attempts in flight per client, each on its own connection (see Slots and Connections). */
const CONNECTIONS = 32;

const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * undici refused to build the request (a header value holding a line break, say): nothing was sent,
 * and sending it again cannot help, so it is neither a network failure nor one to retry.
 */
const UNSENDABLE_CODES = new Set(["UND_ERR_INVALID_ARG", "UND_ERR_NOT_SUPPORTED"]);

/** undici's error once an answer's body has passed the connection's maxResponseSize. */
const EXCEEDED_MAX_SIZE = "UND_ERR_RES_EXCEEDED_MAX_SIZE";

/**
 * An answer whose status line came but whose body is larger than maxResponseBytes (as it came, or once
 * decoded from `coding`): it was not read.
 */
class AnswerTooLarge extends Error {
  constructor(
    readonly status: number,
    readonly announcedBytes?: number,
    readonly coding?: string,
  ) {
    super(`answer larger than maxResponseBytes (HTTP ${status})`);
  }
}

function errorCode(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function describeError(err: unknown): string {
  const code = errorCode(err);
  const message = err instanceof Error ? err.message : String(err);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

export function buildPath(path: string, query: Query | undefined): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.append(k, String(v));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined || text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function describeStatus(httpStatus: number, code: number | undefined): string {
  return httpStatus === 200 && code !== undefined ? `HTTP 200 with code ${code}` : `HTTP ${httpStatus}`;
}

/** One call as the transport runs it: the endpoint's spec and the caller's options. */
type Job<S extends z.ZodType> = CallSpec<S> & CallOptions;

type AttemptOutcome =
  | { ok: true; data: unknown }
  | {
      ok: false;
      failure: Failure;
      error: GpuCloudError;
      httpStatus?: number;
      answer?: ResponseErrorInput;
      /** What came instead of an answer the client can read ("an HTML page"), when that is the failure. */
      unreadable?: string;
    };

type Failed = AttemptOutcome & { ok: false };

/** An answer as it came off the wire, its body decoded. */
interface Exchanged {
  status: number;
  retryAfter: string | string[] | undefined;
  /** The cloud's clock from the answer's Date header (epoch ms), when it is readable. */
  cloudMs: number | undefined;
  body: ReadBody;
}

/** The body as text, or why it could not be decoded into any. */
type ReadBody = { text: string; undecodable?: undefined } | { text?: undefined; undecodable: string };

interface Sent {
  outcome: AttemptOutcome;
  sentAt: number;
  durationMs: number;
}

/** The cloud's clock as its latest `Date` header showed it, and when (on the local monotonic clock). */
interface CloudClockReading {
  cloudMs: number;
  readAt: number;
}

export class Transport {
  private readonly connections: Connections;
  private readonly origin: string;
  private readonly gate: PacingGate;
  private readonly slots = new Slots(CONNECTIONS);
  private readonly options: Omit<TransportOptions, "apiKey">;
  private cloudClock?: CloudClockReading;
  /** Non-enumerable, so util.inspect, console.log and JSON.stringify of a client never show it. */
  declare private readonly secret: string | undefined;

  constructor({ apiKey, ...options }: TransportOptions) {
    this.options = options;
    Object.defineProperty(this, "secret", { value: apiKey, enumerable: false });
    this.origin = options.baseUrl.replace(/\/+$/, "") + API_PREFIX;
    this.connections = new Connections(new URL(this.origin).origin, options.maxResponseBytes);
    this.gate = new PacingGate({ maxPauseMs: options.maxRateLimitWaitMs });
  }

  async call<S extends z.ZodType>(endpoint: CallSpec<S>, options: CallOptions = {}): Promise<z.infer<S>> {
    const spec: Job<S> = { ...endpoint, signal: options.signal, deadline: options.deadline };
    const relPath = buildPath(spec.path, spec.query);
    const maxRetries = spec.maxRetries ?? this.options.maxRetries;
    let spent = NO_RETRIES_YET;
    for (let attempt = 1; ; attempt++) {
      const { outcome, sentAt, durationMs } = await this.sendOnce(spec, relPath);
      const event = { method: spec.method, path: relPath, sentAt, durationMs, attempt, retries: attempt - 1 };
      if (outcome.ok) {
        this.emit({ ...event, status: 200 });
        return outcome.data as z.infer<S>;
      }
      const { failure, error } = outcome;
      this.emit({
        ...event,
        status: outcome.httpStatus,
        ...(failure.kind === "status" && failure.retryAfterMs !== undefined
          ? { retryAfterMs: failure.retryAfterMs }
          : {}),
        error: error.message,
      });
      const decision = decide(spec.safety, failure, spent, maxRetries, this.options.backoff);
      if (decision.action === "fail") throw error;
      if (decision.action === "outcome_unknown") throw this.outcomeUnknown(spec, relPath, outcome);
      const cannotWait = this.cannotWait(spec, outcome, decision.delayMs);
      if (cannotWait) throw cannotWait;
      spent = spend(spent, failure);
      await sleep(decision.delayMs, spec.signal);
    }
  }

  get pacingMs(): number {
    return this.gate.spacingMs;
  }

  /** The cloud's current time (epoch ms) from its latest Date header, or undefined before any answer. */
  cloudNow(): number | undefined {
    if (!this.cloudClock) return undefined;
    return this.cloudClock.cloudMs + Math.round(performance.now() - this.cloudClock.readAt);
  }

  async close(): Promise<void> {
    await this.connections.close();
  }

  /** One attempt: a connection slot, the gate, the request. The gate learns of a 429 before the slot is freed. */
  private async sendOnce<S extends z.ZodType>(spec: Job<S>, relPath: string): Promise<Sent> {
    const release = await this.slots.acquire(spec.signal);
    try {
      const pass = await this.gate.wait({ deadline: spec.deadline, signal: spec.signal });
      if (pass.kind === "turned_away") throw this.turnedAway(spec, relPath, pass);
      const outcome = await this.attempt(spec, relPath);
      // On the gate's clock, read just before the gate hears of the answer: sentAt + durationMs is when
      // the gate learned of a 429, so a request log shows its Retry-After window exactly as the gate held it.
      const durationMs = Date.now() - pass.sentAt;
      if (outcome.ok) this.gate.succeeded();
      else if (outcome.failure.kind === "status" && outcome.failure.status === 429)
        this.gate.rateLimited(outcome.failure.retryAfterMs, pass.sentAt);
      return { outcome, sentAt: pass.sentAt, durationMs };
    } finally {
      release();
    }
  }

  /** How long this call may wait for a rate limit from `now`: its deadline or the client's cap. */
  private waitLimit(spec: CallOptions, now: number): WaitLimit {
    const cap = this.options.maxRateLimitWaitMs;
    const untilDeadline = spec.deadline === undefined ? Infinity : Math.max(0, spec.deadline - now);
    return untilDeadline < cap
      ? { ms: untilDeadline, by: "deadline" }
      : { ms: cap, by: "maxRateLimitWaitMs" };
  }

  /**
   * The error to fail with at once when the wait before the next attempt is too long: a Retry-After
   * beyond the call's wait limit, or any pause that would end past its deadline. Undefined when it may wait.
   */
  private cannotWait<S extends z.ZodType>(
    spec: Job<S>,
    outcome: AttemptOutcome & { ok: false },
    delayMs: number,
  ): GpuCloudError | undefined {
    const now = Date.now();
    const retryAfterMs = outcome.failure.kind === "status" ? outcome.failure.retryAfterMs : undefined;
    const limit = this.waitLimit(spec, now);
    if (retryAfterMs !== undefined && retryAfterMs > limit.ms && outcome.answer) {
      return errorFromResponse({ ...outcome.answer, waitLimit: limit });
    }
    if (spec.deadline !== undefined && now + delayMs > spec.deadline) return outcome.error;
    return undefined;
  }

  private turnedAway<S extends z.ZodType>(
    spec: Job<S>,
    relPath: string,
    pass: GatePass & { kind: "turned_away" },
  ): GpuCloudError {
    const now = Date.now();
    return rateLimitTurnedAway({
      action: spec.action,
      method: spec.method,
      path: relPath,
      heldUntil: pass.heldUntil,
      askedUntil: pass.askedUntil,
      limit: this.waitLimit(spec, now),
      now,
      secret: this.secret,
    });
  }

  private timeoutOf<S extends z.ZodType>(spec: Job<S>): number {
    return spec.timeoutMs ?? this.options.timeoutMs;
  }

  private emit(event: RequestEvent): void {
    if (!this.options.onRequest) return;
    try {
      this.options.onRequest(event);
    } catch {
      // A failing observer must not change the outcome of the call it observes.
    }
  }

  private outcomeUnknown<S extends z.ZodType>(spec: Job<S>, path: string, outcome: Failed): GpuCloudError {
    const { error } = outcome;
    const unread = error instanceof ResponseTooLargeError || error instanceof UnreadableAnswerError;
    return outcomeUnknown({
      action: spec.action,
      method: spec.method,
      path,
      reason: this.whyUnknown(spec, outcome),
      status: outcome.httpStatus,
      code: error.code,
      apiMessage: error.apiMessage,
      reconcile: spec.reconcile ?? "Check the current state before trying again.",
      cause: unread ? error : undefined,
      secret: this.secret,
    });
  }

  /** Why an unsafe call's outcome is unknown, in the words of "the request was sent but ...". */
  private whyUnknown<S extends z.ZodType>(
    spec: Job<S>,
    { failure, error, httpStatus, unreadable }: Failed,
  ): string {
    if (error instanceof ResponseTooLargeError) return `${tooLargeAnswer(error)}, so it was not read`;
    if (failure.kind === "unreadable") {
      return `the answer could not be read (HTTP ${httpStatus} with ${unreadable}), so it does not say whether the work was done`;
    }
    if (failure.kind === "status") {
      return `the service answered ${describeStatus(httpStatus ?? failure.status, error.code)}, which does not say whether the work was done`;
    }
    return failure.kind === "timeout"
      ? `no answer came within ${this.timeoutOf(spec)} ms`
      : "the connection was dropped before the answer arrived";
  }

  /** A success's data read by the endpoint's schema; data it cannot read is an answer that cannot be read. */
  private parseData<S extends z.ZodType>(spec: Job<S>, path: string, data: unknown): AttemptOutcome {
    const parsed = spec.schema.safeParse(data);
    if (parsed.success) return { ok: true, data: parsed.data };
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join(".") || "data"}: ${i.message}`)
      .join("; ");
    return {
      ok: false,
      failure: { kind: "unreadable" },
      httpStatus: 200,
      unreadable: `data that does not match API v2: ${issues}`,
      error: unexpectedShape({ action: spec.action, method: spec.method, path, issues, secret: this.secret }),
    };
  }

  private headers(body: RequestBody | undefined): Record<string, string> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.secret) headers.authorization = `Bearer ${this.secret}`;
    if (body) {
      headers["content-type"] = body.contentType;
      if (body.contentLength !== undefined) headers["content-length"] = String(body.contentLength);
    }
    return headers;
  }

  private requestBody<S extends z.ZodType>(spec: Job<S>): RequestBody | undefined {
    if (spec.body) return spec.body();
    if (spec.json !== undefined) {
      return { body: JSON.stringify(spec.json), contentType: "application/json" };
    }
    return undefined;
  }

  private async attempt<S extends z.ZodType>(spec: Job<S>, relPath: string): Promise<AttemptOutcome> {
    const ctx = { action: spec.action, method: spec.method, path: relPath, secret: this.secret };
    const controller = new AbortController();
    let timedOut = false;
    // The HTTP library loads at the first attempt (http-library.ts), before its timeout starts: on a
    // loaded machine, loading it could take much of a short timeout, and a create would be cut off
    // unanswered for that alone.
    undici();
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutOf(spec));
    const onCallerAbort = (): void => controller.abort();
    spec.signal?.addEventListener("abort", onCallerAbort, { once: true });
    try {
      const body = this.requestBody(spec);
      let answer: Exchanged;
      try {
        answer = await this.exchange(spec, relPath, body, controller.signal);
      } catch (err) {
        if (spec.signal?.aborted) throw spec.signal.reason;
        if (err instanceof AnswerTooLarge) return this.tooLarge(ctx, err);
        // Our own body source refused to go on (an upload stream over the size limit).
        if (err instanceof GpuCloudError) throw err;
        if (UNSENDABLE_CODES.has(errorCode(err) ?? "")) {
          throw inputValidationError(ctx, [
            { field: "request", reason: `cannot be sent (${redact(describeError(err), this.secret)})` },
          ]);
        }
        if (timedOut) {
          return {
            ok: false,
            failure: { kind: "timeout" },
            error: errorFromFailure({
              ...ctx,
              kind: "timeout",
              detail: "timeout",
              timeoutMs: this.timeoutOf(spec),
            }),
          };
        }
        const kind = NOT_SENT_CODES.has(errorCode(err) ?? "") ? "not_sent" : "lost";
        return {
          ok: false,
          failure: { kind },
          error: errorFromFailure({
            ...ctx,
            kind,
            detail: redact(describeError(err), this.secret),
            origin: new URL(this.origin).origin,
          }),
        };
      }
      return this.interpret(spec, relPath, answer);
    } finally {
      clearTimeout(timer);
      spec.signal?.removeEventListener("abort", onCallerAbort);
    }
  }

  private tooLarge(ctx: ErrorContext & { secret?: string }, answer: AnswerTooLarge): Failed {
    return {
      ok: false,
      failure: { kind: "too_large" },
      httpStatus: answer.status,
      error: responseTooLarge({
        ...ctx,
        status: answer.status,
        limitBytes: this.options.maxResponseBytes,
        announcedBytes: answer.announcedBytes,
        coding: answer.coding,
      }),
    };
  }

  /**
   * Sends the request on a connection of its own and reads the answer; fails as soon as `signal`
   * aborts, even where undici does not notice the abort (while it connects, it does not), so the
   * client's timeout bounds the whole attempt.
   */
  private async exchange<S extends z.ZodType>(
    spec: Job<S>,
    relPath: string,
    body: RequestBody | undefined,
    signal: AbortSignal,
  ): Promise<Exchanged> {
    const connection = this.connections.take();
    let settled = false;
    const exchanged = (async (): Promise<Exchanged> => {
      try {
        const res = await undici().request(this.origin + relPath, {
          dispatcher: connection,
          method: spec.method,
          headers: this.headers(body),
          body: body?.body,
          signal,
        });
        const cloudMs = this.readCloudClock(firstHeader(res.headers.date));
        return {
          status: res.statusCode,
          retryAfter: res.headers["retry-after"],
          cloudMs,
          body: await this.readBody(res),
        };
      } finally {
        settled = true;
      }
    })();
    try {
      return await untilAborted(exchanged, signal);
    } finally {
      this.connections.giveBack(connection, settled);
    }
  }

  /**
   * The answer's body as text, read only while it stays within maxResponseBytes: one that announces more
   * is not read at all, and one that streams more is cut off by its connection (undici counts its bytes
   * as they arrive, see Connections), so an endless body costs no more memory than the cap. A compressed
   * body is decoded as it streams in, and what it decodes to is held to the cap as well.
   */
  private async readBody(res: Dispatcher.ResponseData): Promise<ReadBody> {
    const announced = Number(firstHeader(res.headers["content-length"]));
    if (announced > this.options.maxResponseBytes) {
      // Destroying a body nobody reads fails it with an abort error: nothing listens for it any more.
      res.body.on("error", () => undefined).destroy();
      throw new AnswerTooLarge(res.statusCode, announced);
    }
    const coding = [res.headers["content-encoding"] ?? []].flat().join(",");
    let decoded;
    try {
      decoded = await decodeBody(res.body, coding, this.options.maxResponseBytes);
    } catch (err) {
      if (err instanceof DecodedTooLarge) throw new AnswerTooLarge(res.statusCode, undefined, err.coding);
      if (errorCode(err) === EXCEEDED_MAX_SIZE) throw new AnswerTooLarge(res.statusCode);
      throw err;
    }
    // TextDecoder drops a byte order mark, as undici's text() did: JSON.parse refuses one.
    return "bytes" in decoded ? { text: new TextDecoder().decode(decoded.bytes) } : decoded;
  }

  /** Remembers the answer's Date as the cloud's clock; returns it (epoch ms) when it is readable. */
  private readCloudClock(dateHeader: string | undefined): number | undefined {
    const cloudMs = dateHeader === undefined ? NaN : Date.parse(dateHeader);
    if (Number.isNaN(cloudMs)) return undefined;
    this.cloudClock = { cloudMs, readAt: performance.now() };
    return cloudMs;
  }

  private interpret<S extends z.ZodType>(
    spec: Job<S>,
    relPath: string,
    { status, retryAfter: retryAfterHeader, cloudMs, body: { text, undecodable } }: Exchanged,
  ): AttemptOutcome {
    const body = parseJson(text);
    const answer = readAnswer({ status, body, text, undecodable });
    if (isSuccess(answer)) return this.parseData(spec, relPath, isRecord(body) ? body.data : undefined);
    // A Retry-After date is on the cloud's clock: measured from the answer's own Date when it has one.
    const retryAfterMs = parseRetryAfter(retryAfterHeader, cloudMs ?? Date.now());
    const input: ResponseErrorInput = {
      action: spec.action,
      method: spec.method,
      path: relPath,
      url: this.origin + relPath,
      status,
      body,
      text,
      undecodable,
      retryAfterMs,
      receivedAt: Date.now(),
      secret: this.secret,
    };
    const error = errorFromResponse(input);
    if (isUnreadable(answer)) {
      return {
        ok: false,
        failure: { kind: "unreadable" },
        httpStatus: status,
        error,
        answer: input,
        unreadable: describeBody(answer),
      };
    }
    return {
      ok: false,
      failure: { kind: "status", status: retryStatusOf(answer), retryAfterMs },
      httpStatus: status,
      error,
      answer: input,
    };
  }
}
