/**
 * The data-source tests' cloud: a real emulator on a free loopback port with a frozen clock (time moves
 * only when a test advances it) and two users, started once per test file and reset before each test,
 * with the catalogue cache emptied, so every test starts from the seed with an empty request log.
 */
import { startEmulator, type RunningEmulator } from "pulumi-gpucloud/emulator";
import { clearCatalogueCache } from "../../provider/datasources/catalogue-cache";

export const USER = "ds-user";
export const API_KEY = "datasources-key";
export const OTHER_KEY = "other-user-key";

/** Where the cloud is; valid once the file's tests run. */
export interface CloudAddress {
  readonly url: string;
}

export interface LoggedRequest {
  method: string;
  path: string;
  status: number | null;
}

/** Registers the hooks that start, reset and stop the cloud; `keys` replaces the two default users. */
export function useDataSourceCloud(keys = [`${USER}:${API_KEY}`, `other-user:${OTHER_KEY}`]): CloudAddress {
  let running: RunningEmulator | undefined;
  const cloud: CloudAddress = {
    get url() {
      if (!running) throw new Error("the data-source cloud is used before its beforeAll hook ran");
      return running.url;
    },
  };
  beforeAll(async () => {
    running = await startEmulator({ port: 0, apiKeys: keys, timeScale: 0 });
  });
  afterAll(() => running?.close());
  beforeEach(() => freshStart(cloud));
  return cloud;
}

/** Back to the seed with an empty request log and an empty catalogue cache. */
export async function freshStart(cloud: CloudAddress): Promise<void> {
  await admin(cloud, "POST", "/reset");
  await admin(cloud, "DELETE", "/requests");
  clearCatalogueCache();
}

export async function admin(
  cloud: CloudAddress,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const response = await fetch(`${cloud.url}/_emulator${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) {
    throw new Error(`admin ${method} ${path} answered ${response.status}: ${await response.text()}`);
  }
  return response.json();
}

/** API calls the emulator logged (path relative to the API base) since the last reset, optionally to one endpoint. */
export async function requests(cloud: CloudAddress, endpoint?: string): Promise<LoggedRequest[]> {
  const { requests: all } = (await admin(cloud, "GET", "/requests")) as { requests: LoggedRequest[] };
  return endpoint === undefined ? all : all.filter((r) => r.path === endpoint);
}

export async function advance(cloud: CloudAddress, seconds: number): Promise<void> {
  await admin(cloud, "POST", "/clock/advance", { seconds });
}

export function connectionFor(cloud: CloudAddress, apiKey = API_KEY): { baseUrl: string; apiKey: string } {
  return { baseUrl: cloud.url, apiKey };
}
