/**
 * In core's HTTP room, request validation (a zod parse whose first issue becomes 400 code 1 naming the
 * field), paging, and the API's limits on stored inputs.
 */
import { z } from "zod";
import { paramError } from "./errors";

/**
 * Request validation for routes: a zod `safeParse` whose first issue becomes 400 code 1
 * `"<field>: <rule>"` (docs/design/contracts.md#http-conventions). Rules are worded for people, not zod's internals.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  if (body === undefined) return parseWith(schema, {}, "body");
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw paramError("body", "must be a JSON object sent with 'Content-Type: application/json'");
  }
  return parseWith(schema, body, "body");
}

export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.infer<S> {
  return parseWith(schema, query ?? {}, "query");
}

function parseWith<S extends z.ZodType>(schema: S, input: unknown, root: string): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue.path.length > 0 ? formatPath(issue.path) : root;
  throw paramError(field, describeIssue(issue, input));
}

/** `rooms.instances[0].status`: the path of a field as people write it. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, i) => (typeof key === "number" ? `[${key}]` : `${i === 0 ? "" : "."}${String(key)}`))
    .join("");
}

/** The value at `path` inside `input`, reading own properties only (a path may name "constructor"). */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** A zod issue in words for people: "is required", "must be an integer", "must be at most 50 characters". */
export function describeIssue(issue: z.core.$ZodIssue, input: unknown): string {
  if (issue.code === "invalid_type") {
    if (valueAt(input, issue.path) === undefined) return "is required";
    return `must be ${article(issue.expected)}`;
  }
  if (issue.code === "custom" || issue.code === "invalid_value" || issue.code === "invalid_format") {
    return issue.message;
  }
  if (issue.code === "too_big") return `must be at most ${String(issue.maximum)}${unit(issue.origin)}`;
  if (issue.code === "too_small") {
    if (issue.origin === "string" && issue.minimum === 1) return "must not be empty";
    return `must be at least ${String(issue.minimum)}${unit(issue.origin)}`;
  }
  if (issue.code === "unrecognized_keys") return `has an unknown field: ${issue.keys.join(", ")}`;
  return issue.message;
}

function article(expected: string): string {
  if (expected === "int") return "an integer";
  if (expected === "object" || expected === "array") return `an ${expected}`;
  return `a ${expected}`;
}

function unit(origin: string): string {
  if (origin === "string") return " characters";
  return origin === "array" ? " entries" : "";
}

/** An amount of money as a JSON number or a decimal string ("12.5"); `nonNegative` refuses below 0. */
export function amount(nonNegative: boolean) {
  const text = nonNegative ? /^\d+(\.\d+)?$/ : /^-?\d+(\.\d+)?$/;
  return z.custom<number | string>(
    (v) =>
      (typeof v === "number" && Number.isFinite(v) && (!nonNegative || v >= 0)) ||
      (typeof v === "string" && text.test(v)),
    { message: `must be a decimal number${nonNegative ? " of at least 0" : ""}, as a JSON number or string` },
  );
}

/** An integer field of a JSON body restricted to a set of values, e.g. gpu_nums 1, 2, 4, 8. */
export function oneOfInts(values: readonly number[]) {
  return z.number().refine((v) => values.includes(v), { message: `must be one of ${values.join(", ")}` });
}

/** An integer query parameter (query strings are text); out-of-range values are refused, not clamped. */
export function intQuery(min: number, max: number) {
  return z
    .string()
    .regex(/^\d+$/, { message: `must be an integer from ${min} to ${max}` })
    .transform(Number)
    .refine((v) => v >= min && v <= max, { message: `must be an integer from ${min} to ${max}` });
}

// docs/design/cloud-api.md#paging
/** page from 1 and page_size default 20, at most 100, for every paginated list. */
export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;
export const pagingQuery = {
  page: intQuery(1, Number.MAX_SAFE_INTEGER).optional(),
  page_size: intQuery(1, MAX_PAGE_SIZE).optional(),
};

export function paginate<T>(items: readonly T[], page = 1, pageSize = DEFAULT_PAGE_SIZE): T[] {
  return items.slice((page - 1) * pageSize, page * pageSize);
}

/** An idempotency key (workflow and model runs) is at most this many characters. */
export const MAX_IDEMPOTENCY_KEY_CHARACTERS = 256;

/** What one run may keep of its request: the JSON of its inputs, at most this many bytes. */
export const MAX_STORED_INPUT_BYTES = 64 * 1024;

/**
 * Runs keep their inputs for as long as the emulator runs (and in its state file), so a request may
 * store only so much; large media belongs in an asset, which keeps only its measure.
 */
export function requireStorableInputs(inputs: unknown): void {
  const bytes = Buffer.byteLength(JSON.stringify(inputs ?? {}));
  if (bytes > MAX_STORED_INPUT_BYTES) {
    throw paramError(
      "inputs",
      `must be at most ${MAX_STORED_INPUT_BYTES} bytes as JSON (got ${bytes}); upload large media with POST /assets and pass asset://<asset_id>`,
    );
  }
}
