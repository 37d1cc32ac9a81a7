import { Account } from "./account";
import { Assets } from "./assets";
import { Catalogue } from "./catalogue";
import { Images } from "./images";
import { Instances } from "./instances";
import { ModelRuns } from "./model-runs";
import { DEFAULT_BACKOFF } from "./retry-policy";
import { Transport, type RequestEvent } from "./transport";
import { Workflows } from "./workflows";

export interface GpuCloudClientOptions {
  /** {base_url}: the client appends /api/open/v2. */
  baseUrl: string;
  /** Bearer key. Only the pod and market image lists work without one. */
  apiKey?: string;
  /** Per-request timeout (default 30 000 ms). */
  timeoutMs?: number;
  /** Resends allowed after the first attempt, where retry-policy.ts allows any (default 3). */
  maxRetries?: number;
  /** First backoff ceiling (default 500 ms); doubles per retry, full jitter. */
  retryBaseDelayMs?: number;
  /** Largest backoff ceiling (default 8000 ms); Retry-After may ask for more and is honoured. */
  retryMaxDelayMs?: number;
  /** Called after every attempt; the event never carries the key or a header. */
  onRequest?: (event: RequestEvent) => void;
}

export class GpuCloudClient {
  readonly instances: Instances;
  readonly catalogue: Catalogue;
  readonly images: Images;
  readonly account: Account;
  readonly assets: Assets;
  readonly workflows: Workflows;
  readonly modelRuns: ModelRuns;
  private readonly transport: Transport;

  constructor(options: GpuCloudClientOptions) {
    if (typeof options?.baseUrl !== "string" || !/^https?:\/\//.test(options.baseUrl)) {
      throw new TypeError(
        `GpuCloudClient needs baseUrl, the service's http(s) base URL without /api/open/v2 (got ${JSON.stringify(options?.baseUrl)}).`,
      );
    }
    this.transport = new Transport({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      timeoutMs: options.timeoutMs ?? 30_000,
      maxRetries: options.maxRetries ?? 3,
      backoff: {
        baseDelayMs: options.retryBaseDelayMs ?? DEFAULT_BACKOFF.baseDelayMs,
        maxDelayMs: options.retryMaxDelayMs ?? DEFAULT_BACKOFF.maxDelayMs,
      },
      onRequest: options.onRequest,
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

  /** Closes the keep-alive pool; the client cannot be used afterwards. */
  close(): Promise<void> {
    return this.transport.close();
  }

  /** JSON.stringify of a client names it instead of walking its connection pool. */
  toJSON(): Record<string, string> {
    return { client: "GpuCloudClient" };
  }
}
