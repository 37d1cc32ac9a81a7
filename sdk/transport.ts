/**
 * The shared transport: one undici keep-alive pool per client, bearer auth, JSON in and out, the
 * envelope, per-request timeouts, retries per retry-policy.ts, a client-wide pacing gate after 429s,
 * and the onRequest hook. API areas call `call()` and nothing else.
 */
import type { Readable } from "node:stream";
import { Agent, request, type Dispatcher } from "undici";
import type { z } from "zod";
import {
  errorFromFailure,
  errorFromResponse,
  GpuCloudError,
  outcomeUnknown,
  redact,
  unexpectedShape,
} from "./errors";
import {
  decide,
  NO_RETRIES_YET,
  parseRetryAfter,
  spend,
  type BackoffSettings,
  type CallSafety,
  type Failure,
} from "./retry-policy";
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
  onRequest?: (event: RequestEvent) => void;
}

export interface RequestBody {
  body: string | Buffer | Readable;
  contentType: string;
  contentLength?: number;
}

export interface CallOptions {
  signal?: AbortSignal;
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
  signal?: AbortSignal;
  maxRetries?: number;
  /** Overrides the client's per-request timeout for this call (uploads of large files). */
  timeoutMs?: number;
  /** What the caller should do when the outcome is unknown (unsafe calls). */
  reconcile?: string;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Sends are spaced this much wider than the rate the server was seen to allow, to absorb network jitter. */
const PACING_MARGIN = 1.05;
/** A 429 while pacing means the learned rate was too fast (a shared key, a spent token bucket). */
const PACING_GROWTH = 1.25;
/** Without a 429 for this long, the spacing shrinks again, so a raised limit is found. */
const PACING_MEMORY_MS = 30_000;
const MAX_SPACING_MS = 5000;
const UNKNOWN_RATE_SPACING_MS = 50;

/**
 * Client-wide pacing after 429s, so concurrent callers neither stampede nor waste the allowed rate.
 * A 429 pauses every new send until its Retry-After has passed (at least a second on this API, so each
 * avoided 429 is worth about a second of everyone's time). The gate then paces sends at the rate the
 * server was seen to allow: how many of this client's sends it accepted in the second up to the refused
 * one, which is exactly the limit for a sliding-window limiter. 429s to requests sent before the gate
 * reacted belong to the wave already counted; a new wave while pacing widens the spacing by a quarter.
 * After PACING_MEMORY_MS without a 429, each success shrinks the spacing by a tenth until it is gone.
 */
export class PacingGate {
  private pausedUntil = 0;
  private nextSlotAt = 0;
  private spacing = 0;
  /** The spacing before the current wave of 429s. */
  private spacingBeforeWave = 0;
  private waveStartedAt = -Infinity;
  /** The latest refused send (of the current wave, as earlier waves' are older): the window ends there. */
  private latestRefusedSentAt = -Infinity;
  private lastLimitedAt = -Infinity;
  /** When each send went out, oldest first, over the last two seconds; refused ones are taken out. */
  private sends: number[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  /** Current gap between sends, in ms (0 when no 429 was seen lately). */
  get spacingMs(): number {
    return this.spacing;
  }

  /** Resolves with the time the caller may send (this gate's clock): pass it back to rateLimited. */
  async wait(signal?: AbortSignal): Promise<number> {
    for (;;) {
      const now = this.now();
      const at = Math.max(now, this.pausedUntil, this.nextSlotAt);
      if (at <= now) {
        this.nextSlotAt = now + this.spacing;
        this.recordSend(now);
        return now;
      }
      await sleep(at - now, signal);
    }
  }

  /** `sentAt`: what wait() resolved with for the refused request. */
  rateLimited(retryAfterMs: number | undefined, sentAt: number): void {
    const now = this.now();
    this.pausedUntil = Math.max(this.pausedUntil, now + (retryAfterMs ?? 1000));
    this.lastLimitedAt = now;
    this.forgetSend(sentAt);
    // Strictly after: the pause below holds every later send, so a send in the same millisecond as the
    // wave's start went out before the gate reacted.
    if (sentAt > this.waveStartedAt) {
      this.waveStartedAt = now;
      this.spacingBeforeWave = this.spacing;
    }
    // Requests sent together reach the server in any order, so a refused one may have been sent before
    // some that were accepted: the window ends at the latest refused send of the wave. Recomputed on
    // every 429 of the wave, as each takes one more send out of the accepted count.
    this.latestRefusedSentAt = Math.max(this.latestRefusedSentAt, sentAt);
    const end = this.latestRefusedSentAt;
    const accepted = this.sends.filter((t) => t >= end - 1000 && t <= end).length;
    // Nothing accepted says nothing of the rate (the key's budget was spent elsewhere): a short guess.
    const learned = accepted > 0 ? (PACING_MARGIN * 1000) / accepted : UNKNOWN_RATE_SPACING_MS;
    this.spacing = Math.min(MAX_SPACING_MS, Math.max(learned, this.spacingBeforeWave * PACING_GROWTH));
  }

  succeeded(): void {
    if (this.now() - this.lastLimitedAt < PACING_MEMORY_MS) return;
    this.spacing = this.spacing < 10 ? 0 : Math.floor(this.spacing * 0.9);
  }

  private recordSend(at: number): void {
    this.sends.push(at);
    while (this.sends.length > 0 && this.sends[0] < at - 2000) this.sends.shift();
  }

  private forgetSend(at: number): void {
    const index = this.sends.lastIndexOf(at);
    if (index >= 0) this.sends.splice(index, 1);
  }
}

/**
 * At most `size` attempts in flight, the size of the connection pool. A call passes the pacing gate only
 * once it holds a slot, so it goes on the wire at once: nothing that passed the gate before a 429 can
 * wait inside the pool and be sent inside the Retry-After window.
 */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    this.free = size;
  }

  /** Resolves with the function that gives the slot back (to the longest waiter first). */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.free > 0) {
      this.free -= 1;
      return this.releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const grant = (): void => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = (): void => {
        this.waiting.splice(this.waiting.indexOf(grant), 1);
        reject(signal?.reason);
      };
      this.waiting.push(grant);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
    return this.releaser();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    };
  }
}

/** Connections per client; also the number of attempts in flight (see Slots). */
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

function buildPath(path: string, query: Query | undefined): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.append(k, String(v));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

type AttemptOutcome =
  | { ok: true; data: unknown }
  | { ok: false; failure: Failure; error: GpuCloudError; httpStatus?: number; body?: unknown };

export class Transport {
  private readonly agent: Agent;
  private readonly origin: string;
  private readonly gate = new PacingGate();
  private readonly slots = new Slots(CONNECTIONS);
  private readonly options: Omit<TransportOptions, "apiKey">;
  /** Non-enumerable, so util.inspect, console.log and JSON.stringify of a client never show it. */
  declare private readonly secret: string | undefined;

  constructor({ apiKey, ...options }: TransportOptions) {
    this.options = options;
    Object.defineProperty(this, "secret", { value: apiKey, enumerable: false });
    this.origin = options.baseUrl.replace(/\/+$/, "") + API_PREFIX;
    this.agent = new Agent({ keepAliveTimeout: 10_000, connections: CONNECTIONS });
  }

  async call<S extends z.ZodType>(spec: CallSpec<S>): Promise<z.infer<S>> {
    const relPath = buildPath(spec.path, spec.query);
    const maxRetries = spec.maxRetries ?? this.options.maxRetries;
    let spent = NO_RETRIES_YET;
    for (let attempt = 1; ; attempt++) {
      const release = await this.slots.acquire(spec.signal);
      let outcome: AttemptOutcome;
      let durationMs: number;
      let sentAt: number;
      try {
        sentAt = await this.gate.wait(spec.signal);
        const started = performance.now();
        outcome = await this.attempt(spec, relPath);
        durationMs = Math.round(performance.now() - started);
        // The gate learns of a 429 before the slot is given back, so the next sender already waits.
        if (outcome.ok) this.gate.succeeded();
        else if (outcome.failure.kind === "status" && outcome.failure.status === 429)
          this.gate.rateLimited(outcome.failure.retryAfterMs, sentAt);
      } finally {
        release();
      }
      if (outcome.ok) {
        this.emit({
          method: spec.method,
          path: relPath,
          status: 200,
          sentAt,
          durationMs,
          attempt,
          retries: attempt - 1,
        });
        return this.parseData(spec, relPath, outcome.data);
      }
      const { failure, error } = outcome;
      this.emit({
        method: spec.method,
        path: relPath,
        status: outcome.httpStatus,
        sentAt,
        durationMs,
        ...(failure.kind === "status" && failure.retryAfterMs !== undefined
          ? { retryAfterMs: failure.retryAfterMs }
          : {}),
        attempt,
        retries: attempt - 1,
        error: error.message,
      });
      const decision = decide(spec.safety, failure, spent, maxRetries, this.options.backoff);
      if (decision.action === "fail") throw error;
      if (decision.action === "outcome_unknown")
        throw this.outcomeUnknown(spec, relPath, failure, outcome.body);
      spent = spend(spent, failure);
      await sleep(decision.delayMs, spec.signal);
    }
  }

  get pacingMs(): number {
    return this.gate.spacingMs;
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  private timeoutOf<S extends z.ZodType>(spec: CallSpec<S>): number {
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

  private outcomeUnknown<S extends z.ZodType>(
    spec: CallSpec<S>,
    path: string,
    failure: Failure,
    body: unknown,
  ): GpuCloudError {
    const reason =
      failure.kind === "status"
        ? `the service answered HTTP ${failure.status}, which does not say whether the work was done`
        : failure.kind === "timeout"
          ? `no answer came within ${this.timeoutOf(spec)} ms`
          : "the connection was dropped before the answer arrived";
    return outcomeUnknown({
      action: spec.action,
      method: spec.method,
      path,
      reason,
      status: failure.kind === "status" ? failure.status : undefined,
      body,
      reconcile: spec.reconcile ?? "Check the current state before trying again.",
      secret: this.secret,
    });
  }

  private parseData<S extends z.ZodType>(spec: CallSpec<S>, path: string, data: unknown): z.infer<S> {
    const parsed = spec.schema.safeParse(data);
    if (parsed.success) return parsed.data;
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join(".") || "data"}: ${i.message}`)
      .join("; ");
    throw unexpectedShape({ action: spec.action, method: spec.method, path, issues, secret: this.secret });
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

  private requestBody<S extends z.ZodType>(spec: CallSpec<S>): RequestBody | undefined {
    if (spec.body) return spec.body();
    if (spec.json !== undefined) {
      return { body: JSON.stringify(spec.json), contentType: "application/json" };
    }
    return undefined;
  }

  private async attempt<S extends z.ZodType>(spec: CallSpec<S>, relPath: string): Promise<AttemptOutcome> {
    const ctx = { action: spec.action, method: spec.method, path: relPath, secret: this.secret };
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutOf(spec));
    const onCallerAbort = (): void => controller.abort();
    spec.signal?.addEventListener("abort", onCallerAbort, { once: true });
    try {
      const body = this.requestBody(spec);
      let res: Dispatcher.ResponseData;
      let text: string;
      try {
        res = await request(this.origin + relPath, {
          dispatcher: this.agent,
          method: spec.method,
          headers: this.headers(body),
          body: body?.body,
          signal: controller.signal,
        });
        text = await res.body.text();
      } catch (err) {
        if (spec.signal?.aborted) throw spec.signal.reason;
        // Our own body source refused to go on (an upload stream over the size limit).
        if (err instanceof GpuCloudError) throw err;
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
          error: errorFromFailure({ ...ctx, kind, detail: redact(describeError(err), this.secret) }),
        };
      }
      return this.interpret(spec, relPath, res.statusCode, res.headers["retry-after"], text);
    } finally {
      clearTimeout(timer);
      spec.signal?.removeEventListener("abort", onCallerAbort);
    }
  }

  private interpret<S extends z.ZodType>(
    spec: CallSpec<S>,
    relPath: string,
    status: number,
    retryAfterHeader: string | string[] | undefined,
    text: string,
  ): AttemptOutcome {
    let body: unknown;
    try {
      body = text === "" ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (status === 200 && isRecord(body) && body.code === 0) return { ok: true, data: body.data };
    const ctx = { action: spec.action, method: spec.method, path: relPath, secret: this.secret };
    if (status === 200 && !(isRecord(body) && typeof body.code === "number")) {
      return {
        ok: false,
        failure: { kind: "status", status },
        httpStatus: status,
        error: unexpectedShape({ ...ctx, issues: "the body is not the {code, msg, data} envelope" }),
      };
    }
    const retryAfterMs = parseRetryAfter(retryAfterHeader, Date.now());
    // api-v2.md "Envelope code": -2 is a system error; on HTTP 200 it is treated like a 500 for retries.
    const effectiveStatus = status === 200 && isRecord(body) && body.code === -2 ? 500 : status;
    return {
      ok: false,
      failure: { kind: "status", status: effectiveStatus, retryAfterMs },
      httpStatus: status,
      error: errorFromResponse({ ...ctx, status, body: body ?? { msg: text.slice(0, 200) }, retryAfterMs }),
      body,
    };
  }
}
