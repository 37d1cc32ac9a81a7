import type { Socket } from "node:net";
import {
  type EmulatorOptions,
  type RunningEmulator,
  startEmulator,
  userOfKeySpec,
} from "pulumi-gpucloud/emulator";

/** The key every emulator starts with when no apiKeys are given (docs/design/contracts.md#starting-it). */
export const DEMO_KEY = "demo-key";
/** The user behind DEMO_KEY, as admin paths such as /users/{user}/balance name it. */
export const DEMO_USER = userOfKeySpec(DEMO_KEY);

export interface Answer<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

/** An envelope as the API answers it; `data` is loosely typed because tests read what they assert. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Envelope = { code: number; msg: string; data?: any; message?: string };

export interface CallOptions {
  /** Bearer key; DEMO_KEY by default, null for no Authorization header. */
  key?: string | null;
  body?: unknown;
  query?: Record<string, string | number>;
  headers?: Record<string, string>;
  /** Sent as is instead of JSON.stringify(body). */
  rawBody?: string;
}

/** A running emulator plus small helpers for tests: API calls, admin calls, the simulated clock. */
export interface TestEmulator {
  running: RunningEmulator;
  url: string;
  apiBase: string;
  /** Calls `{api_base}{path}` and returns status, headers and parsed JSON body. */
  api(method: string, path: string, options?: CallOptions): Promise<Answer<Envelope>>;
  /** Calls the admin API, `/_emulator{path}`. */
  admin(method: string, path: string, body?: unknown): Promise<Answer<Envelope & Record<string, unknown>>>;
  /** Moves the simulated clock through the admin API and returns the new time. */
  advance(seconds: number): Promise<number>;
  now(): Promise<number>;
  close(): Promise<void>;
}

/**
 * For the emulator's own route tests, which check how each failure is classed by its HTTP status (400,
 * 404) as well as its code: only the http error mode shows it. The default, envelope, answers them
 * with HTTP 200 (error-status.test.ts covers it, and every suite that starts its emulator without this).
 */
export const HTTP_ERROR_STATUS = { errorStatus: "http" } as const;

/** Starts an emulator on a free loopback port with a frozen clock (tests move it with advance). */
export async function startTestEmulator(options: EmulatorOptions = {}): Promise<TestEmulator> {
  const running = await startEmulator({ port: 0, timeScale: 0, ...options });
  const call = async (url: string, method: string, options: CallOptions) => {
    const query = options.query
      ? `?${new URLSearchParams(Object.entries(options.query).map(([k, v]): [string, string] => [k, String(v)]))}`
      : "";
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? DEMO_KEY : options.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let body: string | undefined = options.rawBody;
    if (body === undefined && options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) {
      headers["content-type"] = "application/json";
    }
    const response = await fetch(`${url}${query}`, { method, headers, body });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: text === "" ? undefined : JSON.parse(text),
    };
  };
  const test: TestEmulator = {
    running,
    url: running.url,
    apiBase: running.apiBase,
    api: (method, path, options = {}) => call(`${running.apiBase}${path}`, method, options),
    // With an admin key, admin calls carry it as a script would; the API keeps its own keys.
    admin: (method, path, body) =>
      call(`${running.url}/_emulator${path}`, method, {
        key: options.adminKey ?? null,
        body,
      }),
    advance: async (seconds) => (await test.admin("POST", "/clock/advance", { seconds })).body.now as number,
    now: async () => (await test.admin("GET", "/clock")).body.now as number,
    close: () => running.close(),
  };
  return test;
}

/** Seed lookups by name, as the DESIGN asks tests to do (uuids are stable but opaque). */
export async function gpuUuid(t: TestEmulator, name: string, key?: string): Promise<string> {
  const answer = await t.api("GET", "/gpu/list", { key });
  const gpu = answer.body.data.gpu_list.find((g: { gpu_name: string }) => g.gpu_name === name);
  if (!gpu) throw new Error(`no seed GPU ${name}`);
  return gpu.gpu_uuid;
}

export async function pod(
  t: TestEmulator,
  title: string,
): Promise<{ uuid: string; pod_tag: string[]; price: { hour: number } }> {
  const answer = await t.api("GET", "/pod/list", { query: { name: title, page_size: 100 } });
  const found = answer.body.data.pod_list.find((p: { title: string }) => p.title === title);
  if (!found) throw new Error(`no seed pod ${title}`);
  return found;
}

/** Creates an instance from the ComfyUI pod (by default 1 x 4090D) and returns the creation data. */
export async function createInstance(
  t: TestEmulator,
  options: { key?: string; gpu?: string; gpuNums?: number; podTitle?: string } = {},
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<any> {
  const answer = await t.api("POST", "/instance/create_by_pod", {
    key: options.key,
    body: {
      pod_uuid: (await pod(t, options.podTitle ?? "ComfyUI")).uuid,
      gpu_uuid: await gpuUuid(t, options.gpu ?? "4090D", options.key),
      gpu_nums: options.gpuNums ?? 1,
    },
  });
  if (answer.body.code !== 0) throw new Error(`create failed: ${answer.status} ${answer.body.msg}`);
  return answer.body.data;
}

/** Creates an instance and moves the clock until it runs (status 2). */
export async function runningInstance(
  t: TestEmulator,
  options: Parameters<typeof createInstance>[1] = {},
): Promise<string> {
  const created = await createInstance(t, options);
  await t.advance(60);
  return created.instance_uuid;
}

export async function instanceInfo(t: TestEmulator, uuid: string, key?: string): Promise<Answer<Envelope>> {
  return t.api("GET", "/instance/info", { key, query: { instance_uuid: uuid } });
}

/** How many requests the emulator's log holds per endpoint ("GET /instance/list"), refused ones included. */
export async function callsByEndpoint(t: TestEmulator): Promise<Record<string, number>> {
  const { requests } = (await t.admin("GET", "/requests")).body as unknown as {
    requests: { method: string; path: string }[];
  };
  const counted: Record<string, number> = {};
  for (const r of requests) {
    const endpoint = `${r.method} ${r.path.split("?")[0]}`;
    counted[endpoint] = (counted[endpoint] ?? 0) + 1;
  }
  return counted;
}

/** Everything the server sends on a raw connection until it closes it. */
export function untilClosed(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    socket.on("data", (chunk) => (text += chunk.toString()));
    socket.on("error", () => undefined);
    socket.on("close", () => resolve(text));
  });
}
