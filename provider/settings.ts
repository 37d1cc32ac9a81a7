/**
 * The provider's settings, one table for the resources, the data sources and the package
 * schema: explicit overrides first, then Pulumi config (`gpucloud:*`), then the environment. Values
 * arrive as text from both (stack config is text, "5000"), so each setting parses and checks its own,
 * and every error names both ways to set it.
 */

import { printableAsciiProblem } from "../sdk/printable-ascii";

/** A setting is missing or malformed. The message names every way to set it and never holds the key. */
export class ConfigurationError extends Error {
  override readonly name = "ConfigurationError";
}

/** The largest delay a Node timer takes; a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const API_SUFFIX = "/api/open/v2";

interface SettingSpec<T> {
  /** How messages name it: "The GPU cloud <what> is not set." */
  what: string;
  description: string;
  env: string;
  /** Its type in the package schema. */
  type: "string" | "integer" | "boolean";
  secret?: boolean;
  /** Shown in `pulumi config set gpucloud:<name> <placeholder>`. */
  placeholder: string;
  /** Appended to the message when it is missing. */
  hint?: string;
  default?: T;
  /** The value from its text; throws InvalidValue with the rule it breaks. */
  parse(text: string): T;
}

/** Thrown by a setting's parse: why the text is not a valid value. */
class InvalidValue extends Error {}

export const SETTINGS = {
  apiKey: {
    what: "API key",
    description: "The bearer key of the GPU cloud account.",
    env: "GPUCLOUD_API_KEY",
    type: "string",
    secret: true,
    placeholder: "<key>",
    parse: (text: string) => printableAscii(text),
  },
  baseUrl: {
    what: "base URL",
    description:
      "The cloud's base URL, e.g. http://127.0.0.1:8787 for the local emulator; the client appends /api/open/v2.",
    env: "GPUCLOUD_BASE_URL",
    type: "string",
    placeholder: "<url>",
    hint: " (for the local emulator: http://127.0.0.1:8787)",
    parse: normaliseBaseUrl,
  },
  pollIntervalMs: {
    what: "poll interval",
    description: "How often waits poll the cloud, in milliseconds.",
    env: "GPUCLOUD_POLL_INTERVAL_MS",
    type: "integer",
    placeholder: "<ms>",
    // Clients of the live service poll about every 5 s (docs/design/live-service-notes.md#instance-life).
    default: 5000,
    parse: milliseconds,
  },
  requestTimeoutMs: {
    what: "request timeout",
    description: "How long one API request may take before it counts as failed, in milliseconds.",
    env: "GPUCLOUD_REQUEST_TIMEOUT_MS",
    type: "integer",
    placeholder: "<ms>",
    default: 30_000,
    parse: milliseconds,
  },
  sharedAccount: {
    what: "shared-account setting",
    description:
      "Whether other deployers (other stacks, people, CI jobs, tools) create instances with this account. " +
      "When true (the default), a create whose answer was lost waits until no other deployer can still title " +
      "an instance that appeared before it adopts it; set false when this stack alone creates instances with " +
      "the account, and a lost answer costs only the time in which the cloud may still carry the call out.",
    env: "GPUCLOUD_SHARED_ACCOUNT",
    type: "boolean",
    placeholder: "<true|false>",
    default: true,
    parse: flag,
  },
} satisfies Record<string, SettingSpec<unknown>>;

export type SettingName = keyof typeof SETTINGS;
type ValueOf<N extends SettingName> = ReturnType<(typeof SETTINGS)[N]["parse"]>;

/** `gpucloud:<name>`: the key in stack config, and in the ConfigureRequest the engine sends. */
export function configKey(name: SettingName): string {
  return `gpucloud:${name}`;
}

/** Looks a fully qualified config key (`gpucloud:apiKey`) up; undefined when it is not set. */
export type ConfigLookup = (key: string) => string | undefined;

/** Explicit connection settings that take precedence over Pulumi config and the environment. */
export interface ConnectionOverrides {
  /** `{base_url}` of the cloud, instead of `gpucloud:baseUrl` / GPUCLOUD_BASE_URL. */
  baseUrl?: string;
  /** Bearer key, instead of `gpucloud:apiKey` / GPUCLOUD_API_KEY. */
  apiKey?: string;
}

/** Where the cloud is, with which key, and how long one request may take. */
export interface Connection {
  /** `{base_url}` without the `/api/open/v2` suffix and without a trailing slash. */
  baseUrl: string;
  /** Bearer key; absent only when the caller asked for public endpoints alone. */
  apiKey?: string;
  requestTimeoutMs: number;
}

export interface ProviderSettings extends Connection {
  apiKey: string;
  pollIntervalMs: number;
  sharedAccount: boolean;
}

/** Reads settings from one source of config and the environment. */
class SettingsReader {
  constructor(
    private readonly lookup: ConfigLookup,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** The setting's value, its default, or undefined when it has neither. */
  optional<N extends SettingName>(name: N, override?: string): ValueOf<N> | undefined {
    const spec: SettingSpec<ValueOf<N>> = SETTINGS[name] as SettingSpec<ValueOf<N>>;
    const text = firstSet(override, safely(this.lookup, configKey(name)), this.env[spec.env]);
    if (text === undefined) return spec.default;
    try {
      return spec.parse(text);
    } catch (err) {
      if (!(err instanceof InvalidValue)) throw err;
      // A secret's text is never echoed, not even a malformed one.
      const shown = spec.secret ? "" : ` "${text}"`;
      throw new ConfigurationError(
        `The GPU cloud ${spec.what}${shown} is invalid: ${err.message}. ` +
          `Fix \`${configKey(name)}\` in the stack config or the environment variable ${spec.env}.`,
      );
    }
  }

  required<N extends SettingName>(name: N, override?: string): ValueOf<N> {
    const value = this.optional(name, override);
    if (value === undefined) throw missing(name);
    return value;
  }
}

/**
 * Resolves the connection. `requireKey` is false only for the pod list and the market image list,
 * which the API marks public; a key that is set is still sent.
 */
export function resolveConnection(
  lookup: ConfigLookup,
  overrides: ConnectionOverrides = {},
  requireKey = true,
  env: NodeJS.ProcessEnv = process.env,
): Connection {
  const read = new SettingsReader(lookup, env);
  const baseUrl = read.required("baseUrl", overrides.baseUrl);
  const apiKey = requireKey
    ? read.required("apiKey", overrides.apiKey)
    : read.optional("apiKey", overrides.apiKey);
  return { baseUrl, apiKey, requestTimeoutMs: read.required("requestTimeoutMs") };
}

/** The settings a resource provider runs with; every one is checked before any API call. */
export function resolveProviderSettings(
  lookup: ConfigLookup,
  env: NodeJS.ProcessEnv = process.env,
): ProviderSettings {
  const connection = resolveConnection(lookup, {}, true, env);
  const read = new SettingsReader(lookup, env);
  return {
    ...connection,
    apiKey: connection.apiKey as string,
    pollIntervalMs: read.required("pollIntervalMs"),
    sharedAccount: read.required("sharedAccount"),
  };
}

/**
 * Every setting that is missing or malformed, one message each: what a provider's CheckConfig reports.
 * With `missing: false`, only those set but malformed: what a dynamic provider's check reports, so that a
 * preview, which needs no key and no URL, still fails on a setting that `up` would refuse.
 */
export function settingProblems(
  lookup: ConfigLookup,
  env: NodeJS.ProcessEnv = process.env,
  { missing = true }: { missing?: boolean } = {},
): { name: SettingName; message: string }[] {
  const read = new SettingsReader(lookup, env);
  return (Object.keys(SETTINGS) as SettingName[]).flatMap((name) => {
    try {
      if (missing) read.required(name);
      else read.optional(name);
      return [];
    } catch (err) {
      if (!(err instanceof ConfigurationError)) throw err;
      return [{ name, message: err.message }];
    }
  });
}

function safely(lookup: ConfigLookup, key: string): string | undefined {
  try {
    return lookup(key);
  } catch {
    // The provider server's Config throws when no Configure call arrived; the environment still applies
    // (docs/design/pulumi-machinery.md#the-dynamic-provider-server).
    return undefined;
  }
}

function firstSet(...values: (string | undefined)[]): string | undefined {
  return values.map((v) => v?.trim()).find((v): v is string => v !== undefined && v !== "");
}

function missing(name: SettingName): ConfigurationError {
  const spec: SettingSpec<unknown> = SETTINGS[name];
  const set = `pulumi config set ${spec.secret ? "--secret " : ""}${configKey(name)} ${spec.placeholder}`;
  return new ConfigurationError(
    `The GPU cloud ${spec.what} is not set. Set it with \`${set}\` or the environment variable ${spec.env}${spec.hint ?? ""}.`,
  );
}

function milliseconds(text: string): number {
  const value = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!(value > 0 && value <= MAX_TIMER_MS)) {
    throw new InvalidValue(`it must be a positive integer of milliseconds, at most ${MAX_TIMER_MS}`);
  }
  return value;
}

/** `true` or `false`, as stack config and the environment write a boolean. */
function flag(text: string): boolean {
  if (text === "true") return true;
  if (text === "false") return false;
  throw new InvalidValue("it must be true or false");
}

/** The text when every character of it can go into a request unchanged; see sdk/printable-ascii.ts. */
function printableAscii(text: string): string {
  const problem = printableAsciiProblem(text);
  if (problem) throw new InvalidValue(`it ${problem}`);
  return text;
}

function normaliseBaseUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidValue("it is not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new InvalidValue(`its scheme ${url.protocol} is neither http: nor https:`);
  }
  printableAscii(text);
  const trimmed = url.toString().replace(/\/+$/, "");
  // The base URL is {base_url}; the client appends the versioned path (docs/design/contracts.md#configuration).
  if (trimmed.endsWith(API_SUFFIX)) {
    throw new InvalidValue(`it already ends with ${API_SUFFIX}, which the client appends; drop that suffix`);
  }
  return trimmed;
}
