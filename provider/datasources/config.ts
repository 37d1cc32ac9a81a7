import * as pulumi from "@pulumi/pulumi";

/** Where the data sources find the cloud, and with which key (DESIGN §2). */
export interface Connection {
  /** `{base_url}` without the `/api/open/v2` suffix and without a trailing slash. */
  baseUrl: string;
  /** Bearer key; absent only when the caller asked for public endpoints alone. */
  apiKey?: string;
}

/** Explicit connection settings that take precedence over Pulumi config and the environment. */
export interface ConnectionOverrides {
  /** `{base_url}` of the cloud, instead of `gpucloud:baseUrl` / GPUCLOUD_BASE_URL. */
  baseUrl?: string;
  /** Bearer key, instead of `gpucloud:apiKey` / GPUCLOUD_API_KEY. */
  apiKey?: string;
}

/** A setting is missing or malformed. The message names every way to set it and never holds the key. */
export class ConfigurationError extends Error {
  override readonly name = "ConfigurationError";
}

const API_SUFFIX = "/api/open/v2";

/**
 * Resolves the connection: explicit overrides, then Pulumi config `gpucloud:*`, then the environment.
 * `requireKey` is false only for the pod list and the market image list, which api-v2.md
 * (Authentication, item 3) marks public; a key that is set is still sent.
 */
export function resolveConnection(overrides: ConnectionOverrides = {}, requireKey = true): Connection {
  const config = new pulumi.Config("gpucloud");
  const rawUrl = firstSet(overrides.baseUrl, config.get("baseUrl"), process.env.GPUCLOUD_BASE_URL);
  const apiKey = firstSet(overrides.apiKey, config.get("apiKey"), process.env.GPUCLOUD_API_KEY);
  if (rawUrl === undefined) {
    throw new ConfigurationError(
      "The GPU cloud base URL is not set. Set it with `pulumi config set gpucloud:baseUrl <url>` " +
        "or the environment variable GPUCLOUD_BASE_URL (for the local emulator: http://127.0.0.1:8787).",
    );
  }
  if (requireKey && apiKey === undefined) {
    throw new ConfigurationError(
      "The GPU cloud API key is not set. Set it with `pulumi config set --secret gpucloud:apiKey <key>` " +
        "or the environment variable GPUCLOUD_API_KEY.",
    );
  }
  return { baseUrl: normaliseBaseUrl(rawUrl), apiKey };
}

function firstSet(...values: (string | undefined)[]): string | undefined {
  return values.map((v) => v?.trim()).find((v): v is string => v !== undefined && v !== "");
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
