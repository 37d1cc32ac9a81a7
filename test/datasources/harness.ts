import { startEmulator } from "pulumi-gpucloud/emulator";
import { clearCatalogueCache } from "../../provider/datasources/catalogue-cache";

export const USER = "ds-user";
export const API_KEY = "datasources-key";
export const OTHER_KEY = "other-user-key";

export type RunningEmulator = Awaited<ReturnType<typeof startEmulator>>;

export interface LoggedRequest {
  method: string;
  path: string;
  status: number | null;
}

/** A real emulator on a free loopback port with a frozen clock: time moves only when a test advances it. */
export async function startFrozenEmulator(): Promise<RunningEmulator> {
  return startEmulator({ port: 0, apiKeys: [`${USER}:${API_KEY}`, `other-user:${OTHER_KEY}`], timeScale: 0 });
}

export async function admin(
  emu: RunningEmulator,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const response = await fetch(`${emu.url}/_emulator${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) {
    throw new Error(`admin ${method} ${path} answered ${response.status}: ${await response.text()}`);
  }
  return response.json();
}

/** Back to the seed with an empty request log and an empty catalogue cache. */
export async function freshStart(emu: RunningEmulator): Promise<void> {
  await admin(emu, "POST", "/reset");
  await admin(emu, "DELETE", "/requests");
  clearCatalogueCache();
}

/** API calls the emulator logged (path relative to the API base) since the last reset, optionally to one endpoint. */
export async function requests(emu: RunningEmulator, endpoint?: string): Promise<LoggedRequest[]> {
  const { requests: all } = (await admin(emu, "GET", "/requests")) as { requests: LoggedRequest[] };
  return endpoint === undefined ? all : all.filter((r) => r.path === endpoint);
}

export async function advance(emu: RunningEmulator, seconds: number): Promise<void> {
  await admin(emu, "POST", "/clock/advance", { seconds });
}

export function connectionFor(emu: RunningEmulator, apiKey = API_KEY): { baseUrl: string; apiKey: string } {
  return { baseUrl: emu.url, apiKey };
}
