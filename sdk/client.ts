import { constants } from "node:buffer";
import { Account } from "./account";
import { Assets } from "./assets";
import { Catalogue } from "./catalogue";
import { Images } from "./images";
import { Instances } from "./instances";
import { ModelRuns } from "./model-runs";
import { inputValidationError, type InputIssue } from "./errors";
import { DEFAULT_MAX_PAUSE_MS } from "./pacing-gate";
import { DEFAULT_BACKOFF } from "./retry-policy";
import { printableAsciiProblem } from "./printable-ascii";
import { MAX_TIMER_MS } from "./sleep";
import { Transport, type CallOptions, type RequestEvent } from "./transport";
import { Workflows } from "./workflows";

export interface GpuCloudClientOptions {
  /** {base_url}: the client appends /api/open/v2. */
  baseUrl: string;
  /** Bearer key, printable ASCII without spaces. Only the pod and market image lists work without one. */
  apiKey?: string;
  /**
   * Per-request timeout (default 30 000 ms; the provider's gpucloud:requestTimeoutMs). A read that times
   * out is retried and then fails with TimeoutError; a create, power or save call that times out is not
   * resent and fails with OutcomeUnknownError, since the cloud may still carry it out.
   */
  timeoutMs?: number;
  /** Resends allowed after the first attempt, where retry-policy.ts allows any (default 3). */
  maxRetries?: number;
  /** First backoff ceiling (default 500 ms); doubles per retry, full jitter. */
  retryBaseDelayMs?: number;
  /** Largest backoff ceiling (default 8000 ms); Retry-After may ask for more and is honoured. */
  retryMaxDelayMs?: number;
  /**
   * The longest one rate-limit wait may last (default 120 000 ms). A 429 whose Retry-After asks for more
   * fails at once with RateLimitError saying how long the cloud asked to wait; a call's own `deadline`
   * can shorten this further.
   */
  maxRateLimitWaitMs?: number;
  /**
   * The most bytes the client reads of one answer's body (default 67 108 864, 64 MiB). A larger answer,
   * or an endless one, is cut off there (or at timeoutMs, whichever comes first), unread: a read then
   * fails with ResponseTooLargeError and is not retried; a create, power or save call fails with
   * OutcomeUnknownError (its cause the ResponseTooLargeError), since the cloud may have done the work.
   */
  maxResponseBytes?: number;
  /** Called after every attempt; the event never carries the key or a header. */
  onRequest?: (event: RequestEvent) => void;
}

/**
 * The largest answers of API v2 are far below this: a page of 100 instances with their server maps is
 * about 90 KB, a workflow's detail with its parameter manifest about 5 KB, an asset record under 1 KB.
 * Run records echo their inputs, and a data URL input may be as large as a request body (1 MiB), so a
 * page of 64 such runs still fits. An answer near the cap, read and parsed whole, takes the client's
 * memory to about 260 MiB, and an endless one stops at the cap at about 165 MiB (`npm run bench:memory`).
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
/** Below this even an error answer may not fit. */
const MIN_RESPONSE_BYTES = 1024;

export class GpuCloudClient {
  readonly instances: Instances;
  readonly catalogue: Catalogue;
  readonly images: Images;
  readonly account: Account;
  readonly assets: Assets;
  readonly workflows: Workflows;
  readonly modelRuns: ModelRuns;
  private readonly transport: Transport;
  private verified?: Promise<void>;
  private writeAttemptsEnded = 0;

  constructor(options: GpuCloudClientOptions) {
    const issues = optionIssues(options);
    if (issues.length > 0)
      throw inputValidationError({ action: "create the GPU cloud client", method: "", path: "" }, issues);
    this.transport = new Transport({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      timeoutMs: options.timeoutMs ?? 30_000,
      maxRetries: options.maxRetries ?? 3,
      backoff: {
        baseDelayMs: options.retryBaseDelayMs ?? DEFAULT_BACKOFF.baseDelayMs,
        maxDelayMs: options.retryMaxDelayMs ?? DEFAULT_BACKOFF.maxDelayMs,
      },
      maxRateLimitWaitMs: options.maxRateLimitWaitMs ?? DEFAULT_MAX_PAUSE_MS,
      maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      onRequest: (event) => {
        if (event.method !== "GET") this.writeAttemptsEnded++;
        options.onRequest?.(event);
      },
    });
    this.instances = new Instances(this.transport);
    this.catalogue = new Catalogue(this.transport);
    this.images = new Images(this.transport, this.instances);
    this.account = new Account(this.transport);
    this.assets = new Assets(this.transport);
    this.workflows = new Workflows(this.transport);
    this.modelRuns = new ModelRuns(this.transport);
  }

  /**
   * The gap this client currently leaves between requests, learned from 429s (0 when none came lately).
   * Under a rate limit each request costs this much of the budget, whatever it waits in the queue.
   */
  get pacingMs(): number {
    return this.transport.pacingMs;
  }

  /**
   * How many attempts of calls that may change the cloud (every method but GET) have ended, answered or
   * failed, since this client was made. A read sent after this count last moved can see what they did
   * (a write whose answer was lost may still land later: no read can promise to see that).
   */
  get writesEnded(): number {
    return this.writeAttemptsEnded;
  }

  /**
   * Checks that baseUrl serves API v2, with one cheap public call (the first pod of /pod/list, no key
   * needed). Throws EndpointNotFoundError when the address answers 404 (a wrong path, a proxy's page),
   * or another GpuCloudError when it answers something that is not API v2 (an HTML page with 200, say).
   * Concurrent calls share one request (made with the first caller's options), and once it succeeded
   * later calls return at once; after a failure the next call asks again.
   */
  verifyService(options: CallOptions = {}): Promise<void> {
    this.verified ??= this.catalogue.pods({ page: 1, page_size: 1 }, options).then(
      () => undefined,
      (err: unknown) => {
        this.verified = undefined;
        throw err;
      },
    );
    return this.verified;
  }

  /**
   * The cloud's current time in Unix ms: the `Date` header of the latest answer plus the local time
   * elapsed since (to within the header's one-second resolution). Undefined before any answer arrived.
   */
  cloudNow(): number | undefined {
    return this.transport.cloudNow();
  }

  /** Closes the keep-alive pool; the client cannot be used afterwards. */
  close(): Promise<void> {
    return this.transport.close();
  }

  /** JSON.stringify of a client names it instead of walking its connection pool. */
  toJSON(): Record<string, string> {
    return { client: "GpuCloudClient" };
  }
}

function checkDuration(issues: InputIssue[], field: string, value: unknown, min: number): void {
  if (value === undefined) return;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > MAX_TIMER_MS) {
    issues.push({
      field,
      reason: `must be an integer number of ms from ${min} to ${MAX_TIMER_MS}, got ${JSON.stringify(value)}`,
    });
  }
}

/** The answer is read as one text, so the cap can be no more than the longest string Node holds. */
function checkResponseBytes(issues: InputIssue[], value: unknown): void {
  if (value === undefined) return;
  const max = constants.MAX_STRING_LENGTH;
  if (typeof value !== "number" || !Number.isInteger(value) || value < MIN_RESPONSE_BYTES || value > max) {
    issues.push({
      field: "maxResponseBytes",
      reason: `must be an integer number of bytes from ${MIN_RESPONSE_BYTES} to ${max} (the longest text Node can hold), got ${JSON.stringify(value)}`,
    });
  }
}

function optionIssues(options: GpuCloudClientOptions): InputIssue[] {
  const issues: InputIssue[] = [];
  if (typeof options?.baseUrl !== "string" || !/^https?:\/\/[^/]/.test(options.baseUrl)) {
    issues.push({
      field: "baseUrl",
      reason: `must be the service's http(s) root URL, without /api/open/v2 (got ${JSON.stringify(options?.baseUrl)})`,
    });
  } else {
    const urlProblem = printableAsciiProblem(options.baseUrl);
    if (urlProblem) issues.push({ field: "baseUrl", reason: urlProblem });
    else if (!URL.canParse(options.baseUrl))
      issues.push({ field: "baseUrl", reason: `is not a URL (got ${JSON.stringify(options.baseUrl)})` });
  }
  if (typeof options?.baseUrl === "string" && /\/api\/open\/v2\/*$/.test(options.baseUrl)) {
    issues.push({
      field: "baseUrl",
      reason: `must be the service root without /api/open/v2, which the client appends itself (got ${JSON.stringify(options.baseUrl)})`,
    });
  }
  if (options?.apiKey !== undefined && typeof options.apiKey !== "string") {
    issues.push({ field: "apiKey", reason: "must be a string" });
  }
  const keyProblem = typeof options?.apiKey === "string" ? printableAsciiProblem(options.apiKey) : undefined;
  if (keyProblem) issues.push({ field: "apiKey", reason: keyProblem });
  checkDuration(issues, "timeoutMs", options?.timeoutMs, 1);
  checkDuration(issues, "maxRateLimitWaitMs", options?.maxRateLimitWaitMs, 0);
  checkDuration(issues, "retryBaseDelayMs", options?.retryBaseDelayMs, 0);
  checkDuration(issues, "retryMaxDelayMs", options?.retryMaxDelayMs, 0);
  checkResponseBytes(issues, options?.maxResponseBytes);
  const retries = options?.maxRetries;
  if (retries !== undefined && !(Number.isInteger(retries) && retries >= 0 && retries <= 100)) {
    issues.push({
      field: "maxRetries",
      reason: `must be an integer from 0 to 100, got ${JSON.stringify(retries)}`,
    });
  }
  return issues;
}
