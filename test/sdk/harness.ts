/**
 * A real emulator over loopback for sdk tests, with its admin API (docs/design/contracts.md#admin-api). The
 * clock is frozen (timeScale 0) and moves only when a test advances it.
 */
import { startEmulator } from "pulumi-gpucloud/emulator";
import {
  GpuCloudClient,
  type GpuCloudClientOptions,
  type GpuCloudError,
  type RequestEvent,
  type WorkflowDetail,
} from "pulumi-gpucloud/sdk";
import { request } from "undici";

export const USER = "alice";
export const KEY = "sk-sdk-test-4f1c9a7e2b";
export const OTHER_USER = "bob";
export const OTHER_KEY = "sk-sdk-other-8d2e5b";

export interface LoggedRequest {
  method: string;
  path: string;
  status?: number;
}

export interface Cloud {
  url: string;
  client(options?: Partial<GpuCloudClientOptions>): GpuCloudClient;
  /** Events seen by every client this cloud made. */
  events: RequestEvent[];
  reset(): Promise<void>;
  advance(seconds: number): Promise<void>;
  fault(path: string, kind: string, count: number, extra?: Record<string, unknown>): Promise<void>;
  requests(): Promise<LoggedRequest[]>;
  clearRequests(): Promise<void>;
  setBalance(user: string, balance: number): Promise<void>;
  disableKey(key: string): Promise<void>;
  close(): Promise<void>;
}

export async function admin(
  url: string,
  method: "GET" | "POST" | "PUT" | "DELETE",
  path: string,
  body?: unknown,
): Promise<unknown> {
  const res = await request(url + path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`admin ${method} ${path} answered ${res.statusCode}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}

function logEntries(body: unknown): LoggedRequest[] {
  if (Array.isArray(body)) return body as LoggedRequest[];
  const record = body as Record<string, unknown>;
  for (const key of ["requests", "items", "data"]) {
    const value = record?.[key];
    if (Array.isArray(value)) return value as LoggedRequest[];
    if (value && typeof value === "object") return logEntries(value);
  }
  throw new Error(`unexpected request log shape: ${JSON.stringify(body).slice(0, 200)}`);
}

export async function startCloud(options: Record<string, unknown> = {}): Promise<Cloud> {
  const emulator = await startEmulator({
    port: 0,
    timeScale: 0,
    apiKeys: [`${USER}:${KEY}`, `${OTHER_USER}:${OTHER_KEY}`],
    ...options,
  });
  const url = emulator.url;
  const clients: GpuCloudClient[] = [];
  const events: RequestEvent[] = [];
  return {
    url,
    events,
    client(extra = {}) {
      const client = new GpuCloudClient({
        baseUrl: url,
        apiKey: KEY,
        retryBaseDelayMs: 5,
        retryMaxDelayMs: 40,
        ...extra,
        onRequest: (event) => {
          events.push(event);
          extra.onRequest?.(event);
        },
      });
      clients.push(client);
      return client;
    },
    reset: async () => {
      await admin(url, "POST", "/_emulator/reset");
      events.length = 0;
    },
    advance: async (seconds) => {
      await admin(url, "POST", "/_emulator/clock/advance", { seconds });
    },
    fault: async (path, kind, count, extra = {}) => {
      await admin(url, "POST", "/_emulator/faults", { path, kind, count, ...extra });
    },
    requests: async () => logEntries(await admin(url, "GET", "/_emulator/requests")),
    clearRequests: async () => {
      await admin(url, "DELETE", "/_emulator/requests");
    },
    setBalance: async (user, balance) => {
      await admin(url, "PUT", `/_emulator/users/${user}/balance`, { balance });
    },
    disableKey: async (key) => {
      await admin(url, "POST", `/_emulator/keys/${key}/disable`);
    },
    close: async () => {
      await Promise.all(clients.map((c) => c.close()));
      await emulator.close();
    },
  };
}

/** Count logged calls to one API path (relative to the API base). */
export function countCalls(log: LoggedRequest[], path: string, method = "POST"): number {
  return log.filter((r) => r.method === method && r.path.split("?")[0].endsWith(path)).length;
}

/**
 * Resolves once a client of this cloud has had an answer from `path` (relative to the API base): for a
 * step that must reach the cloud before its clock moves, however slowly a loaded machine sends it.
 */
export async function answered(cloud: Cloud, path: string): Promise<void> {
  while (!cloud.events.some((e) => e.path === path && e.status !== undefined)) await tick(5);
}

/** Lets a waiter take its first poll before the clock moves. */
export function tick(ms = 30): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const PNG = Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex");

/** A value for every required input of a manifest; media inputs get freshly uploaded assets. */
export async function requiredInputs(
  client: GpuCloudClient,
  detail: WorkflowDetail,
): Promise<Record<string, unknown>> {
  const inputs: Record<string, unknown> = {};
  let label = 0;
  for (const p of detail.editable_parameter_manifest.filter((e) => e.required)) {
    const option = p.ui_schema?.control === "select" ? p.ui_schema.options?.[0] : undefined;
    const media = p.value_type.replace(/_input$/, "");
    if (option) {
      inputs[p.name] = option.value;
    } else if (media === "image" || media === "video" || media === "audio" || media === "file") {
      const extension = { image: "png", video: "mp4", audio: "mp3", file: "txt" }[media];
      const asset = await client.assets.upload(PNG, {
        filename: `in-${label}.${extension}`,
        media_type: media,
      });
      inputs[p.name] = { uri: asset.asset_uri, label: ` @ref${label++}` };
    } else {
      inputs[p.name] = { string: "a cat on a skateboard", int: 1, float: 0.5, bool: true }[p.value_type];
    }
  }
  return inputs;
}

/** The emulator's two ways of answering business failures (EmulatorOptions.errorStatus). */
export const ERROR_MODES = ["http", "envelope"] as const;

/** A cloud for the enclosing describe block: started before its tests, closed after them. */
export function cloudFor(options: Record<string, unknown> = {}): () => Cloud {
  let cloud: Cloud | undefined;
  beforeAll(async () => {
    cloud = await startCloud(options);
  });
  afterAll(() => cloud?.close());
  return () => {
    if (!cloud) throw new Error("the cloud is not started yet");
    return cloud;
  };
}

/** The error a call fails with; a call that succeeds fails the test. */
export async function failure(promise: Promise<unknown>): Promise<GpuCloudError> {
  return promise.then(
    () => {
      throw new Error("expected a failure");
    },
    (err: GpuCloudError) => err,
  );
}
