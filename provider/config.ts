/** Provider configuration (DESIGN §2): stack config first, then the environment. */
import { GpuCloudClient } from "../sdk";

export interface ProviderSettings {
  apiKey: string;
  baseUrl: string;
  /** How often waits poll the cloud; field-notes.md says clients poll about every 5 s. */
  pollIntervalMs: number;
}

/** What the dynamic-provider server hands to `configure` (its `req.config`). */
export interface ConfigSource {
  get(key: string): string | undefined;
}

type Configured = Partial<Record<"apiKey" | "baseUrl" | "pollIntervalMs", string>>;

const KEYS = {
  apiKey: {
    config: "gpucloud:apiKey",
    env: "GPUCLOUD_API_KEY",
    set: "pulumi config set --secret gpucloud:apiKey <key>",
  },
  baseUrl: {
    config: "gpucloud:baseUrl",
    env: "GPUCLOUD_BASE_URL",
    set: "pulumi config set gpucloud:baseUrl <url>",
  },
  pollIntervalMs: {
    config: "gpucloud:pollIntervalMs",
    env: "GPUCLOUD_POLL_INTERVAL_MS",
    set: "pulumi config set gpucloud:pollIntervalMs <ms>",
  },
} as const;

const DEFAULT_POLL_INTERVAL_MS = 5000;

let configured: Configured = {};
let cached: { key: string; client: GpuCloudClient } | undefined;

function read(source: ConfigSource, key: string): string | undefined {
  try {
    const value = source.get(key);
    return typeof value === "string" && value !== "" ? value : undefined;
  } catch {
    // The server's Config throws when no Configure call arrived (DESIGN §7); the environment still applies.
    return undefined;
  }
}

/** Called from every resource's `configure`: keys are fully qualified, secrets already unwrapped. */
export function configure(source: ConfigSource): void {
  configured = {
    apiKey: read(source, KEYS.apiKey.config),
    baseUrl: read(source, KEYS.baseUrl.config),
    pollIntervalMs: read(source, KEYS.pollIntervalMs.config),
  };
}

function setting(name: keyof typeof KEYS, env: NodeJS.ProcessEnv): string | undefined {
  return configured[name] ?? (env[KEYS[name].env] || undefined);
}

function missing(name: "apiKey" | "baseUrl", what: string): Error {
  const k = KEYS[name];
  return new Error(
    `gpucloud: no ${what} is configured. Set it with \`${k.set}\` or the ${k.env} environment variable.`,
  );
}

/** The effective settings; a missing key or URL is an error naming both ways to set it. */
export function settings(env: NodeJS.ProcessEnv = process.env): ProviderSettings {
  const apiKey = setting("apiKey", env);
  if (!apiKey) throw missing("apiKey", "API key");
  const baseUrl = setting("baseUrl", env);
  if (!baseUrl) throw missing("baseUrl", "base URL");
  const poll = Number(setting("pollIntervalMs", env) ?? DEFAULT_POLL_INTERVAL_MS);
  if (!Number.isInteger(poll) || poll <= 0) {
    throw new Error(
      `gpucloud: pollIntervalMs must be a positive integer of milliseconds (${KEYS.pollIntervalMs.config} or ${KEYS.pollIntervalMs.env}).`,
    );
  }
  return { apiKey, baseUrl, pollIntervalMs: poll };
}

/** One client (and connection pool) per provider process and settings; it lives in this module, not in state. */
export function client(): { client: GpuCloudClient; settings: ProviderSettings } {
  const s = settings();
  const key = `${s.baseUrl}\n${s.apiKey}`;
  if (cached?.key !== key) {
    void cached?.client.close();
    cached = { key, client: new GpuCloudClient({ baseUrl: s.baseUrl, apiKey: s.apiKey }) };
  }
  return { client: cached.client, settings: s };
}
