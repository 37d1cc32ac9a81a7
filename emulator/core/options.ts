/**
 * In core, the rules of the emulator's options (each refused by name before it starts) and what they resolve
 * to: durations, latency per path.
 */
import { z } from "zod";
import { ADMIN_KEY_MIN_LENGTH } from "./http/access";
import { parseKeySpec } from "./auth";
import { MAX_STATE_TEXT } from "./state/schema";
import { DEFAULT_DURATIONS, DURATION_NAMES, type Durations } from "./durations";
import { amount, describeIssue, formatPath } from "./http/validation";

/** An option the emulator cannot start with; the message names the option and the rule. */
export class OptionError extends Error {
  constructor(
    readonly option: string,
    readonly rule: string,
  ) {
    super(`${option}: ${rule}`);
    this.name = "OptionError";
  }
}

/** Ten minutes: longer than any client waits for one call, short enough to be a mistake beyond. */
export const MAX_LATENCY_MS = 600_000;
const MAX_DURATION_SECONDS = 10 * 365 * 86_400;

export const durationsOption = z
  .object(Object.fromEntries(DURATION_NAMES.map((name) => [name, z.int().min(0).max(MAX_DURATION_SECONDS)])))
  .partial()
  .strict();

export const utilizationOption = z.object({
  gpu: z.number().min(0).max(100),
  fb: z.number().min(0).max(100),
});

export const latencyOption = z.record(z.string(), z.int().min(0).max(MAX_LATENCY_MS));

/** The rules of every option that is a plain value; each is checked on its own so the error names it. */
const OPTION_RULES: Record<string, z.ZodType> = {
  host: z.string().min(1),
  allowedHosts: z.array(
    z.string().regex(/^\.?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/, {
      message:
        "must be a host name such as host.docker.internal, or .example.com for a domain and its subdomains",
    }),
  ),
  adminKey: z
    .string()
    .refine((key) => key.length >= ADMIN_KEY_MIN_LENGTH, {
      message: `must be at least ${ADMIN_KEY_MIN_LENGTH} characters (for example the output of openssl rand -hex 16)`,
    })
    .refine((key) => !/\s/.test(key), { message: "must not contain spaces" }),
  port: z.int().min(0).max(65535),
  apiKeys: z.array(
    z.string().refine((spec) => validKeySpec(spec), {
      message: `must be KEY or USER:KEY, without spaces, with neither part empty and at most ${MAX_STATE_TEXT} characters`,
    }),
  ),
  balance: amount(true),
  timeScale: z.number().min(0),
  rateLimit: z.int().min(0),
  stateFile: z.string().min(1),
  seedFile: z.string().min(1),
  startTime: z.int().min(0),
  requestTimeoutMs: z.int().min(1).max(3_600_000),
  maxConnections: z.int().min(1).max(1_000_000),
  utilization: utilizationOption,
  durations: durationsOption,
  latency: latencyOption,
};

/** Checks every option given; throws an OptionError naming the first one at fault. */
export function checkOptions(options: object): void {
  for (const [name, schema] of Object.entries(OPTION_RULES)) {
    const value = (options as Record<string, unknown>)[name];
    if (value !== undefined) checkOption(name, schema, value);
  }
}

/** Parses one option with its schema, or throws an OptionError naming the option and the field at fault. */
export function checkOption<S extends z.ZodType>(option: string, schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const rule = describeIssue(issue, value);
  throw new OptionError(option, issue.path.length > 0 ? `${formatPath(issue.path)}: ${rule}` : rule);
}

/** The durations to run with: the defaults, with what `--durations` sets. */
export function resolveDurations(given: Partial<Durations> | undefined): Durations {
  return { ...DEFAULT_DURATIONS, ...checkOption("durations", durationsOption, given ?? {}) };
}

/**
 * Real added latency per API path (`--latency PATH=MS,...,default=MS`). Paths are relative to the API
 * base, like fault paths; a path no API route answers is refused, since it would never apply.
 */
export class LatencyTable {
  private constructor(
    private readonly perPath: ReadonlyMap<string, number>,
    private readonly fallback: number,
  ) {}

  static from(given: Record<string, number> | undefined, isApiPath: (path: string) => boolean): LatencyTable {
    // The paths as given (own keys, __proto__ included), before the schema could drop any.
    for (const path of Object.keys(given ?? {})) {
      if (path !== "default" && (!path.startsWith("/") || !isApiPath(path))) {
        throw new OptionError(
          "latency",
          `${path} is not an API path; give paths relative to the API base (e.g. /instance/create_by_pod) or default`,
        );
      }
    }
    const latency = new Map(Object.entries(checkOption("latency", latencyOption, given ?? {})));
    const fallback = latency.get("default") ?? 0;
    latency.delete("default");
    return new LatencyTable(latency, fallback);
  }

  of(apiPath: string): number {
    return this.perPath.get(apiPath) ?? this.fallback;
  }
}

function validKeySpec(spec: string): boolean {
  try {
    parseKeySpec(spec);
    return true;
  } catch {
    return false;
  }
}
