/** The shared diff: replacement is declared per resource as a list of inputs, not coded. */
import { isUnknown } from "./check";

export interface DiffRules {
  /** Inputs changed in place by update. */
  update: readonly string[];
  /** Inputs whose change replaces the resource. */
  replace: readonly string[];
}

export interface DiffOutcome {
  changes: boolean;
  replaces: string[];
  deleteBeforeReplace: boolean;
}

/** Equality of two input values as JSON, where absent and null are the same. */
export function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/**
 * Compares the old state (outputs, which carry every input) with the new checked inputs.
 * An unknown value (preview) counts as a change; in a replace field that plans a replacement,
 * the conservative answer the terraform bridge gives too: the real value is diffed again at `up`.
 */
export function diffInputs(
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
  rules: DiffRules,
): DiffOutcome {
  const changed = (field: string) => isUnknown(news[field]) || !sameValue(olds[field], news[field]);
  const replaces = rules.replace.filter(changed);
  const updates = rules.update.filter(changed);
  return { changes: replaces.length > 0 || updates.length > 0, replaces, deleteBeforeReplace: false };
}
