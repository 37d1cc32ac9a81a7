/**
 * Configuration of the resources and the data sources (DESIGN §2): explicit overrides first, then
 * Pulumi config (`gpucloud:*`), then the environment. One table names every setting and both ways
 * to set it, so every error tells the user exactly what to do.
 */
import { GpuCloudClient } from "../sdk";

/** A setting is missing or malformed. The message names every way to set it and never holds the key. */
export class ConfigurationError extends Error {
  override readonly name = "ConfigurationError";
}

const SETTINGS = {
  apiKey: {
    what: "API key",
    config: "gpucloud:apiKey",
    env: "GPUCLOUD_API_KEY",
    set: "pulumi config set --secret gpucloud:apiKey <key>",
  },
  baseUrl: {
    what: "base URL",
    config: "gpucloud:baseUrl",
    env: "GPUCLOUD_BASE_URL",
    set: "pulumi config set gpucloud:baseUrl <url>",
  },
  pollIntervalMs: {
    what: "poll interval",
    config: "gpucloud:pollIntervalMs",
    env: "GPUCLOUD_POLL_INTERVAL_MS",
    set: "pulumi config set gpucloud:pollIntervalMs <ms>",
  },
} as const;

type SettingName = keyof typeof SETTINGS;

/** Looks a fully qualified config key (`gpucloud:apiKey`) up; undefined when it is not set. */
export type ConfigLookup = (key: string) => string | undefined;

/** Explicit connection settings that take precedence over Pulumi config and the environment. */
export interface ConnectionOverrides {
  /** `{base_url}` of the cloud, instead of `gpucloud:baseUrl` / GPUCLOUD_BASE_URL. */
  baseUrl?: string;
  /** Bearer key, instead of `gpucloud:apiKey` / GPUCLOUD_API_KEY. */
  apiKey?: string;
}

/** Where the cloud is, and with which key. */
export interface Connection {
  /** `{base_url}` without the `/api/open/v2` suffix and without a trailing slash. */
  baseUrl: string;
  /** Bearer key; absent only when the caller asked for public endpoints alone. */
  apiKey?: string;
}

export interface ProviderSettings extends Connection {
  apiKey: string;
  /** How often waits poll the cloud; field-notes.md says clients poll about every 5 s. */
  pollIntervalMs: number;
}

const API_SUFFIX = "/api/open/v2";
const DEFAULT_POLL_INTERVAL_MS = 5000;

/**
 * Resolves the connection. `requireKey` is false only for the pod list and the market image list,
 * which api-v2.md (Authentication, item 3) marks public; a key that is set is still sent.
 */
export function resolveConnection(
  lookup: ConfigLookup,
  overrides: ConnectionOverrides = {},
  requireKey = true,
  env: NodeJS.ProcessEnv = process.env,
): Connection {
  const rawUrl = firstSet(overrides.baseUrl, setting("baseUrl", lookup, env));
  const apiKey = firstSet(overrides.apiKey, setting("apiKey", lookup, env));
  if (rawUrl === undefined) throw missing("baseUrl", " (for the local emulator: http://127.0.0.1:8787)");
  if (requireKey && apiKey === undefined) throw missing("apiKey");
  return { baseUrl: normaliseBaseUrl(rawUrl), apiKey };
}

/** The settings a resource provider runs with; every one is checked before any API call. */
export function resolveProviderSettings(
  lookup: ConfigLookup,
  env: NodeJS.ProcessEnv = process.env,
): ProviderSettings {
  const { baseUrl, apiKey } = resolveConnection(lookup, {}, true, env);
  const rawPoll = setting("pollIntervalMs", lookup, env);
  const pollIntervalMs = rawPoll === undefined ? DEFAULT_POLL_INTERVAL_MS : Number(rawPoll);
  if (!Number.isInteger(pollIntervalMs) || pollIntervalMs <= 0) {
    throw new ConfigurationError(
      `The poll interval "${rawPoll}" is invalid: it must be a positive integer of milliseconds. ` +
        `Fix \`${SETTINGS.pollIntervalMs.config}\` in the stack config or the environment variable ${SETTINGS.pollIntervalMs.env}.`,
    );
  }
  return { baseUrl, apiKey: apiKey as string, pollIntervalMs };
}

function setting(name: SettingName, lookup: ConfigLookup, env: NodeJS.ProcessEnv): string | undefined {
  return firstSet(safely(lookup, SETTINGS[name].config), env[SETTINGS[name].env]);
}

function safely(lookup: ConfigLookup, key: string): string | undefined {
  try {
    return lookup(key);
  } catch {
    // The provider server's Config throws when no Configure call arrived (DESIGN §7); the environment still applies.
    return undefined;
  }
}

function firstSet(...values: (string | undefined)[]): string | undefined {
  return values.map((v) => v?.trim()).find((v): v is string => v !== undefined && v !== "");
}

function missing(name: SettingName, hint = ""): ConfigurationError {
  const s = SETTINGS[name];
  return new ConfigurationError(
    `The GPU cloud ${s.what} is not set. Set it with \`${s.set}\` or the environment variable ${s.env}${hint}.`,
  );
}

function normaliseBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidUrl(raw, "it is not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw invalidUrl(raw, `its scheme ${url.protocol} is neither http: nor https:`);
  }
  const trimmed = url.toString().replace(/\/+$/, "");
  // DESIGN §2: the base URL is {base_url}; the client appends the versioned path itself.
  if (trimmed.endsWith(API_SUFFIX)) {
    throw invalidUrl(raw, `it already ends with ${API_SUFFIX}, which the client appends; drop that suffix`);
  }
  return trimmed;
}

function invalidUrl(raw: string, why: string): ConfigurationError {
  return new ConfigurationError(
    `The GPU cloud base URL "${raw}" is invalid: ${why}. ` +
      "Fix `gpucloud:baseUrl` in the stack config or the environment variable GPUCLOUD_BASE_URL.",
  );
}

/** What the dynamic-provider server hands to `configure` (its `req.config`). */
export interface ConfigSource {
  get(key: string): string | undefined;
}

// Provider-process state: it lives in this module (required at call time by the shim), never in state.
let configSource: ConfigSource | undefined;
let cached: { key: string; client: GpuCloudClient } | undefined;

/** Called from every resource's `configure`: keys are fully qualified, secrets already unwrapped. */
export function configure(source: ConfigSource): void {
  configSource = source;
}

/** The effective provider settings; a missing key or URL is an error naming both ways to set it. */
export function settings(env: NodeJS.ProcessEnv = process.env): ProviderSettings {
  return resolveProviderSettings((key) => configSource?.get(key), env);
}

/** One client (and connection pool) per provider process and settings. */
export function client(): { client: GpuCloudClient; settings: ProviderSettings } {
  const s = settings();
  const key = `${s.baseUrl}\n${s.apiKey}`;
  if (cached?.key !== key) {
    void cached?.client.close();
    cached = { key, client: new GpuCloudClient({ baseUrl: s.baseUrl, apiKey: s.apiKey }) };
  }
  return { client: cached.client, settings: s };
}
