/**
 * The naive provider the benchmark measures against: what GPU-cloud providers commonly do. Plain undici,
 * one /instance/info per resource per poll at a fixed interval, no coalescing, and on 429 or 5xx a retry
 * after a fixed delay that ignores Retry-After. Check and diff are plain field comparisons.
 */
import { Agent, request } from "undici";

const API_PREFIX = "/api/open/v2";
/** A common naive choice: sleep one second and try again. */
const RETRY_DELAY_MS = 1000;
/** Enough that the baseline finishes every scenario instead of failing part-way under rate limits. */
const MAX_ATTEMPTS = 1000;
const RUNNING = 2;

export interface BaselineInputs {
  podUuid: string;
  gpuUuid: string;
  gpuNums: number;
  title?: string;
}

export interface BaselineState {
  id: string;
  inputs: BaselineInputs;
  outputs: Record<string, unknown>;
}

interface Envelope {
  code: number;
  msg: string;
  data?: unknown;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class BaselineProvider {
  private readonly agent = new Agent({ keepAliveTimeout: 10_000, connections: 32 });
  private readonly origin: string;

  constructor(
    baseUrl: string,
    private readonly apiKey: string,
    private readonly pollIntervalMs: number,
  ) {
    this.origin = baseUrl.replace(/\/+$/, "") + API_PREFIX;
  }

  check(inputs: Record<string, unknown>): { inputs: BaselineInputs; failures: string[] } {
    const failures: string[] = [];
    if (typeof inputs.podUuid !== "string") failures.push("podUuid");
    if (typeof inputs.gpuUuid !== "string") failures.push("gpuUuid");
    if (![1, 2, 4, 8].includes(inputs.gpuNums as number)) failures.push("gpuNums");
    if (inputs.title !== undefined && typeof inputs.title !== "string") failures.push("title");
    return { inputs: inputs as unknown as BaselineInputs, failures };
  }

  diff(olds: BaselineInputs, news: BaselineInputs): { changes: boolean; replaces: string[] } {
    const replaces = (["podUuid", "gpuUuid", "gpuNums"] as const).filter((k) => olds[k] !== news[k]);
    return { changes: replaces.length > 0 || olds.title !== news.title, replaces };
  }

  async create(inputs: BaselineInputs): Promise<BaselineState> {
    const created = (await this.call("POST", "/instance/create_by_pod", {
      pod_uuid: inputs.podUuid,
      gpu_uuid: inputs.gpuUuid,
      gpu_nums: inputs.gpuNums,
    })) as { instance_uuid: string };
    const id = created.instance_uuid;
    if (inputs.title !== undefined) {
      await this.call("POST", "/instance/update_title", { instance_uuid: id, title: inputs.title });
    }
    for (;;) {
      const info = await this.info(id);
      if (info?.status === RUNNING) return { id, inputs, outputs: info };
      await sleep(this.pollIntervalMs);
    }
  }

  /** Undefined when the instance is gone. */
  async read(id: string): Promise<Record<string, unknown> | undefined> {
    return this.info(id);
  }

  async delete(id: string): Promise<void> {
    await this.call("POST", "/instance/destroy", { instance_uuid: id });
    while ((await this.info(id)) !== undefined) await sleep(this.pollIntervalMs);
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private async info(id: string): Promise<Record<string, unknown> | undefined> {
    try {
      return (await this.call("GET", `/instance/info?instance_uuid=${encodeURIComponent(id)}`)) as Record<
        string,
        unknown
      >;
    } catch (err) {
      if (err instanceof GoneError) return undefined;
      throw err;
    }
  }

  private async call(method: "GET" | "POST", path: string, json?: unknown): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      const res = await request(this.origin + path, {
        dispatcher: this.agent,
        method,
        headers: {
          authorization: `Bearer ${this.apiKey}`,
          ...(json === undefined ? {} : { "content-type": "application/json" }),
        },
        body: json === undefined ? undefined : JSON.stringify(json),
      });
      const body = (await res.body.json()) as Envelope;
      if (res.statusCode === 200 && body.code === 0) return body.data;
      // The live service says "missing" with code -1 in an HTTP 200 (the emulator's default), or with 404.
      if (res.statusCode === 404 || (body.code === -1 && /not found/i.test(body.msg))) {
        throw new GoneError(`${method} ${path}: ${body.msg}`);
      }
      const retryable = res.statusCode === 429 || res.statusCode >= 500;
      if (!retryable || attempt >= MAX_ATTEMPTS) {
        throw new Error(`${method} ${path} failed: HTTP ${res.statusCode} ${body.msg}`);
      }
      await sleep(RETRY_DELAY_MS);
    }
  }
}

class GoneError extends Error {}
