/** Check helpers: per-field zod parsing that tolerates preview unknowns and names the field at fault. */
import type { z } from "zod";

/** The value the engine sends for an input that is not known yet (during preview). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

export function isUnknown(value: unknown): boolean {
  return value === UNKNOWN;
}

export interface CheckFailure {
  property: string;
  reason: string;
}

export interface CheckResult<T> {
  inputs: T;
  failures: CheckFailure[];
}

/**
 * A rule across fields, run on the parsed inputs. It must itself skip values that are unknown;
 * `failed` names the fields that already broke their own rules (so one mistake is reported once);
 * `olds` are the inputs the state holds (none for a create).
 */
export type CrossFieldCheck<T> = (
  inputs: Partial<Record<keyof T, unknown>>,
  failed: ReadonlySet<string>,
  olds: Readonly<Record<string, unknown>>,
) => CheckFailure[];

/** A rule over several inputs, with the rule in words: the resource's reference page lists it. */
export type CrossFieldRule<T> = CrossFieldCheck<T> & { readonly rule: string };

export function crossFieldRule<T>(rule: string, check: CrossFieldCheck<T>): CrossFieldRule<T> {
  return Object.assign(check, { rule });
}

/** The property in which a generated resource class hands its name to a dynamic provider's Check (autoname.ts). */
export const RESOURCE_NAME_KEY = "__resourceName";

/** Properties the dynamic door sends beside the inputs: the serialized provider, and the resource's name. */
const DOOR_PROPERTIES: ReadonlySet<string> = new Set(["__provider", RESOURCE_NAME_KEY]);

/**
 * The failure in the rule's words. A missing input says it is required; a value of the wrong type says
 * what it got, since a rule such as "must be one of 1, 2, 4, 8" reads as satisfied by a string "2".
 */
function reason(field: string, issue: z.core.$ZodIssue, value: unknown): string {
  if (issue.path.length > 0) return `${field}.${issue.path.join(".")} ${issue.message}`;
  if (issue.code !== "invalid_type") return `${field} ${issue.message}`;
  if (value === undefined) return `${field} is required: it ${issue.message}`;
  return / got /.test(issue.message)
    ? `${field} ${issue.message}`
    : `${field} ${issue.message}, got ${shown(value)}`;
}

/** Stands for a secret input's value, which a message never shows. */
const SECRET = Symbol("secret");

/**
 * A failure of a secret input: the rule, never the value. Rules say what they got after " got "
 * ("must be one of 1, 2, 4, 8, got 3"); that part is replaced.
 */
function withoutValue(text: string): string {
  const at = text.indexOf(" got ");
  return at < 0 ? text : `${text.slice(0, at).replace(/,$/, "")}, got a secret value`;
}

/** A rule across inputs broken by a secret one: the rule (its words before the first colon), not the value. */
function ruleOnly(failure: CheckFailure): CheckFailure {
  const rule = failure.reason.split(":")[0];
  return { property: failure.property, reason: `${rule} (the value is secret, so it is not shown)` };
}

/**
 * A value of the wrong type as a message shows it: by its type only. It may be a secret the provider
 * cannot tell from others (the dynamic-provider server gets secrets in the clear).
 */
function shown(value: unknown): string {
  if (value === SECRET) return "a secret value";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number" && !Number.isSafeInteger(value)) {
    return Number.isInteger(value) ? "a number too large to be exact" : "a fractional number";
  }
  return typeof value === "object" || typeof value === "undefined"
    ? `an ${typeof value}`
    : `a ${typeof value}`;
}

/**
 * Parses each field on its own so that an unknown value skips only its own rules (a preview must never
 * fail on what it cannot know yet); the parsed values carry the schema's defaults and normal forms.
 */
export function checkInputs<S extends z.ZodObject>(
  schema: S,
  news: Record<string, unknown>,
  rules: CrossFieldRule<z.output<S>>[] = [],
  olds: Readonly<Record<string, unknown>> = {},
  secrets: ReadonlySet<string> = new Set(),
): CheckResult<z.output<S>> {
  const shape = schema.shape as Record<string, z.ZodType>;
  const inputs: Record<string, unknown> = {};
  const failures: CheckFailure[] = [];
  for (const [field, fieldSchema] of Object.entries(shape)) {
    const value = news[field];
    if (isUnknown(value)) {
      inputs[field] = value;
      continue;
    }
    const parsed = fieldSchema.safeParse(value);
    if (parsed.success) {
      if (parsed.data !== undefined) inputs[field] = parsed.data;
    } else {
      failures.push(
        ...parsed.error.issues.map((issue) => ({
          property: field,
          reason: secrets.has(field)
            ? withoutValue(reason(field, issue, SECRET))
            : reason(field, issue, value),
        })),
      );
    }
  }
  for (const field of Object.keys(news)) {
    // Own keys only: `in` would take a stray `toString` or `constructor` for an input of every resource.
    if (!DOOR_PROPERTIES.has(field) && !Object.hasOwn(shape, field)) {
      failures.push({
        property: field,
        reason: `${field} is not an input of this resource (allowed: ${Object.keys(shape).join(", ")})`,
      });
    }
  }
  const failed = new Set(failures.map((f) => f.property));
  for (const rule of rules) {
    const broken = rule(inputs as Partial<Record<keyof z.output<S>, unknown>>, failed, olds);
    failures.push(...broken.map((f) => (secrets.has(f.property) ? ruleOnly(f) : f)));
  }
  return { inputs: inputs as z.output<S>, failures };
}

/** A zod issue in words, its path naming the field (`spec.gpuNums must be ...`), never zod's JSON. */
export function issueText(issue: z.core.$ZodIssue, under = ""): string {
  const where = [under, ...issue.path.map(String)].filter((part) => part !== "").join(".");
  let rule = issue.message;
  // zod's own wording ("Invalid input: expected string, received undefined") as a rule.
  if (issue.code === "invalid_type" && /^Invalid input/.test(rule)) {
    rule = / received undefined$/.test(rule) ? "is missing" : `must be ${withArticle(issue.expected)}`;
  }
  return where === "" ? rule : `${where} ${rule}`;
}

function withArticle(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/**
 * Values that did not come from a Check (the cloud's record on import, the inputs a state holds) parsed
 * by the resource's input schema: on failure, `explain` makes the error of the problems, each naming its
 * field and the rule, as a Check would (the value never: it may be secret).
 */
export function parsedOrExplained<S extends z.ZodObject>(
  schema: S,
  value: Record<string, unknown>,
  explain: (problems: string) => string,
): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const { failures } = checkInputs(schema, value, [], {}, new Set(Object.keys(value)));
  const problems =
    failures.length > 0
      ? failures.map((f) => f.reason.replace(/, got a secret value$/, ""))
      : parsed.error.issues.map((issue) => issueText(issue));
  throw new Error(explain(problems.join("; ")));
}

/** Cross-field rule: exactly one of the fields is set (unknowns count as possibly set: the rule is skipped). */
export function exactlyOneOf<T>(fields: (keyof T & string)[], hint: string): CrossFieldRule<T> {
  return crossFieldRule(`exactly one of ${fields.join(", ")}: ${hint}`, (inputs, failed) => {
    if (fields.some((f) => isUnknown(inputs[f]) || failed.has(f))) return [];
    const set = fields.filter((f) => inputs[f] !== undefined);
    if (set.length === 1) return [];
    const reasonText =
      set.length === 0
        ? `exactly one of ${fields.join(", ")} is required: ${hint}`
        : `only one of ${fields.join(", ")} may be set, got ${set.join(" and ")}: ${hint}`;
    return [{ property: set[1] ?? fields[0], reason: reasonText }];
  });
}
