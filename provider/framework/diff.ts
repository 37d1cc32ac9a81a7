/**
 * The shared diff. Replacement is declared per resource, not coded: the inputs whose change replaces it,
 * the inputs whose absence keeps the cloud's value, the input that adopts an existing resource by id,
 * the inputs that name what an output reports.
 * It answers per input (what changed and how), so a native plugin can send a detailed diff; the dynamic
 * provider collapses it into changes and replaces.
 */
import { isUnknown } from "./check";

export interface DiffRules<I> {
  /** Inputs whose change replaces the resource; every other input changes in place. */
  replaceOnChanges: readonly (keyof I & string)[];
  /** Inputs whose absence leaves the cloud's value as it is: unset is no change. */
  keepWhenUnset?: readonly (keyof I & string)[];
  /** The input that adopts an existing resource by id: unset, or this resource's own id, is no change. */
  adoptsById?: keyof I & string;
  /**
   * Inputs that name what the cloud reports in an output (Instance's podTag, its imageTag): set to the
   * value the output holds, they are no change, as the resource already is what they ask for.
   */
  sameAsOutput?: Partial<Record<keyof I & string, string>>;
  /**
   * Inputs that together list the values an output may take (Instance's gpuUuid and fallbackGpuUuids, the
   * models its runningGpuUuid may be): while the new inputs still list the output's value, changing or
   * reordering them is no change. A state stored before the output existed holds its value in `inputs[0]`.
   */
  choicesOf?: { output: string; inputs: readonly (keyof I & string)[] };
  /**
   * A stored state that must be made anew whatever the inputs: an id that names no resource but a create
   * whose outcome is still unknown (Instance's `pending-create:...`), a PersonalImage whose save failed.
   * Such a state is always replaced, the change reported under `output`.
   */
  remade?: { when(id: string, stored: Record<string, unknown>): boolean; output: string };
}

/** How one input changed: set where it was not, unset where it was, or changed. */
export interface PropertyChange {
  kind: "add" | "delete" | "update";
  /** The change replaces the resource. */
  replace: boolean;
}

export interface ResourceDiff {
  /** Every input that changed. */
  properties: Record<string, PropertyChange>;
  changes: boolean;
  /** The inputs whose change replaces the resource. */
  replaces: string[];
}

/** Equality of two input values as JSON, where absent and null are the same. */
export function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/**
 * Compares the old state (outputs, which carry every input) with the new checked inputs. An unknown
 * value (preview) counts as a change; in an input that replaces, that plans a replacement, the
 * conservative answer the terraform bridge gives too: the real value is diffed again at `up`.
 * `updatable` false (no update operation) makes every change a replacement.
 */
export function diffInputs<I>(
  id: string,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
  inputs: readonly string[],
  rules: DiffRules<I>,
  updatable = true,
): ResourceDiff {
  if (rules.remade?.when(id, olds)) {
    const { output } = rules.remade;
    return { properties: { [output]: { kind: "update", replace: true } }, changes: true, replaces: [output] };
  }
  const wanted = intended(id, olds, news, rules);
  const properties: Record<string, PropertyChange> = {};
  for (const name of inputs) {
    const [before, after] = [olds[name], wanted[name]];
    if (!isUnknown(after) && sameValue(before, after)) continue;
    properties[name] = {
      kind: before === undefined || before === null ? "add" : after === undefined ? "delete" : "update",
      replace: !updatable || (rules.replaceOnChanges as readonly string[]).includes(name),
    };
  }
  const replaces = Object.keys(properties).filter((name) => properties[name].replace);
  return { properties, changes: Object.keys(properties).length > 0, replaces };
}

/** The new inputs with the declared no-change cases resolved to the old values. */
function intended<I>(
  id: string,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
  rules: DiffRules<I>,
): Record<string, unknown> {
  const wanted = { ...news };
  for (const name of rules.keepWhenUnset ?? []) {
    if (wanted[name] === undefined) wanted[name] = olds[name];
  }
  for (const [name, output] of Object.entries(rules.sameAsOutput ?? {}) as [string, string][]) {
    const value = wanted[name];
    if (value !== undefined && !isUnknown(value) && olds[output] != null && sameValue(value, olds[output])) {
      wanted[name] = olds[name];
    }
  }
  if (rules.choicesOf && stillListed(olds, wanted, rules.choicesOf)) {
    for (const name of rules.choicesOf.inputs) wanted[name] = olds[name];
  }
  const adopt = rules.adoptsById;
  if (adopt !== undefined && (news[adopt] === undefined || news[adopt] === id)) wanted[adopt] = olds[adopt];
  return wanted;
}

/** Whether the new inputs, every value known, still list the value the output holds. */
function stillListed(
  olds: Record<string, unknown>,
  wanted: Record<string, unknown>,
  choices: { output: string; inputs: readonly string[] },
): boolean {
  const current = olds[choices.output] ?? olds[choices.inputs[0]];
  const listed = choices.inputs.flatMap((name) => [wanted[name]].flat());
  if (typeof current !== "string" || listed.some(isUnknown)) return false;
  return listed.includes(current);
}
