/**
 * The rule each input is checked against, in words, read off its JSON Schema: the keywords zod writes for
 * its own checks (`min(1)` is minLength 1), and the `rule` a definition states beside a refine that no
 * keyword can say. Check enforces exactly these, so the words cannot promise more or less than it does.
 */
import { withoutNull, type JsonSchema } from "../json-schema";

/** An example of the one date-time form Check accepts, a zone always included. */
const DATE_TIME = "an ISO 8601 date and time with a zone, e.g. 2026-01-02T03:04:05Z";

/** The rule of one input, or "" when its type says all there is. */
export function ruleWords(schema: JsonSchema): string {
  const { schema: present } = withoutNull(schema);
  if (present.anyOf) return present.anyOf.map(optionWords).join(", or ");
  return constraints(present).join(", ");
}

/** One of several forms an input takes: what it is, then its limits. */
function optionWords(option: JsonSchema): string {
  if (option.format === "date-time") return DATE_TIME;
  const noun = option.type === "integer" ? "a whole number" : `a ${String(option.type)}`;
  return [noun, ...constraints(option)].join(" ");
}

function constraints(schema: JsonSchema): string[] {
  if (schema.format === "date-time") return [DATE_TIME];
  return [
    ...lengthWords(schema),
    ...rangeWords(schema),
    ...(schema.enum ? [`one of ${schema.enum.join(", ")}`] : []),
    ...(schema.rule ? [schema.rule] : []),
  ];
}

function lengthWords({ minLength, maxLength }: JsonSchema): string[] {
  const words: string[] = [];
  if (minLength === 1) words.push("not empty");
  else if (minLength !== undefined) words.push(`at least ${minLength} characters`);
  if (maxLength !== undefined) words.push(`at most ${maxLength} characters`);
  return words;
}

function rangeWords(schema: JsonSchema): string[] {
  const { maximum } = schema;
  const minimum =
    schema.minimum ??
    (schema.exclusiveMinimum !== undefined && schema.type === "integer"
      ? schema.exclusiveMinimum + 1
      : undefined);
  if (minimum !== undefined && maximum !== undefined) return [`from ${minimum} to ${maximum}`];
  if (minimum !== undefined) return [`at least ${minimum}`];
  if (schema.exclusiveMinimum !== undefined) return [`more than ${schema.exclusiveMinimum}`];
  if (maximum !== undefined) return [`at most ${maximum}`];
  return [];
}
