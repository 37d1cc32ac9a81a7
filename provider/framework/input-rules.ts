/**
 * An input's rules, declared on the input's own schema, once: whether its change replaces the resource,
 * what counts as no change, whether a preview may leave it unknown, and the rules it keeps with other
 * inputs. Check, Diff, the package schema and the reference pages read them from there; a Fleet that
 * takes the Instance's inputs takes their rules with them (docs/architecture.md#one-definition-many-readers).
 *
 * The rules are kept beside the schema objects, not in their `.meta`, so they never reach the JSON Schema
 * that zod makes of the inputs. A shape picked or extended from another keeps the same field schemas, and
 * so their rules.
 */
import type { z } from "zod";
import { crossFieldRule, isUnknown, type CrossFieldRule } from "./check";
import type { DiffRules } from "./diff";

export interface InputRules {
  /** A change replaces the resource: the cloud cannot change it in place. */
  replaces?: true;
  /** Unset is no change: the resource keeps what the cloud has. */
  keepWhenUnset?: true;
  /**
   * The output that reports what this input names (Instance's podTag, its imageTag): set to the value
   * that output holds, the input is no change, as the resource already is what it asks for.
   */
  sameAsOutput?: string;
  /**
   * The output whose value this input, with the others that name the same output, lists the choices of
   * (Instance's gpuUuid and fallbackGpuUuids, the models its runningGpuUuid may be): while the new inputs
   * still list the output's value, changing or reordering them is no change.
   */
  listsChoicesOf?: string;
  /** It adopts an existing resource by its id: unset, or the resource's own id, is no change. */
  adoptsById?: true;
  /**
   * What the input decides that cannot wait for `up` ("which members the fleet has"): it must be known
   * when the program runs, a preview's unknown fails Check. Without it, an unknown skips the input's rules.
   */
  knownBecauseItDecides?: string;
  /** Rules it keeps with other inputs, run by Check after every input passed its own. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  checks?: readonly CrossFieldRule<any>[];
}

const declared = new WeakMap<z.ZodType, InputRules>();

/**
 * The schema, with its rules declared on it: put it in the inputs' shape as is. Declare them last, on
 * the schema the shape holds: `.optional()`, `.describe()` and the like make a new schema without them.
 */
export function withRules<S extends z.ZodType>(schema: S, rules: InputRules): S {
  declared.set(schema, rules);
  return schema;
}

/** The rules declared on an input's schema; none when it has none. */
export function rulesOf(schema: z.ZodType): InputRules {
  return declared.get(schema) ?? {};
}

type Shape = Record<string, z.ZodType>;

function ruledInputs(inputs: z.ZodObject): [string, InputRules][] {
  return Object.entries(inputs.shape as Shape).map(([name, schema]) => [name, rulesOf(schema)]);
}

/** The inputs whose change replaces the resource, in declaration order. */
export function replacingInputs(inputs: z.ZodObject): string[] {
  return ruledInputs(inputs)
    .filter(([, rules]) => rules.replaces)
    .map(([name]) => name);
}

/** The diff rules the inputs declare, and the resource's own `remade` beside them. */
export function declaredDiffRules<I>(inputs: z.ZodObject, remade?: DiffRules<I>["remade"]): DiffRules<I> {
  const ruled = ruledInputs(inputs);
  const names = (has: (rules: InputRules) => unknown) =>
    ruled.filter(([, rules]) => has(rules)).map(([name]) => name as keyof I & string);
  const sameAsOutput = Object.fromEntries(
    ruled.flatMap(([name, rules]) => (rules.sameAsOutput ? [[name, rules.sameAsOutput]] : [])),
  ) as Partial<Record<keyof I & string, string>>;
  const [adoptsById] = names((rules) => rules.adoptsById);
  const choices = ruled.filter(([, rules]) => rules.listsChoicesOf !== undefined);
  const choicesOf =
    choices.length > 0
      ? { output: choices[0][1].listsChoicesOf!, inputs: choices.map(([name]) => name as keyof I & string) }
      : undefined;
  return {
    replaceOnChanges: names((rules) => rules.replaces),
    keepWhenUnset: names((rules) => rules.keepWhenUnset),
    sameAsOutput,
    ...(adoptsById ? { adoptsById } : {}),
    ...(choicesOf ? { choicesOf } : {}),
    ...(remade ? { remade } : {}),
  };
}

/**
 * Every rule across inputs, in the order Check runs them: those declared on the inputs, in declaration
 * order (a rule declared on two inputs runs once), then the resource's own, then the rule that the inputs
 * which must be known are known.
 */
export function crossFieldRules<T>(
  inputs: z.ZodObject,
  own: readonly CrossFieldRule<T>[] = [],
): CrossFieldRule<T>[] {
  const ruled = ruledInputs(inputs);
  const declared = ruled.flatMap(([, rules]) => (rules.checks ?? []) as CrossFieldRule<T>[]);
  const known = ruled.filter(([, rules]) => rules.knownBecauseItDecides !== undefined);
  return [
    ...new Set([...declared, ...own]),
    ...(known.length > 0
      ? [mustBeKnown<T>(known.map(([name, rules]) => [name, rules.knownBecauseItDecides!]))]
      : []),
  ];
}

/** The inputs that decide what a preview cannot wait for: an unknown one fails, naming what it decides. */
function mustBeKnown<T>(inputs: [string, string][]): CrossFieldRule<T> {
  const decided = [...new Set(inputs.map(([, what]) => what))].join(" and ");
  return crossFieldRule<T>(
    `${inputs.map(([name]) => name).join(", ")} must be known when the program runs (plain values or stack config), not ` +
      `outputs of resources the same deployment makes: they decide ${decided}`,
    (given) =>
      inputs
        .filter(([name]) => isUnknown(given[name as keyof T]))
        .map(([name, what]) => ({
          property: name,
          reason:
            `${name} is not known yet: it decides ${what}, so it must be a plain value or ` +
            "stack config, not the output of a resource this deployment makes",
        })),
  );
}
