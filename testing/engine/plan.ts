/** What a preview or up plans for one resource of the program, and what a preview tells the program of it. */
import type { Resolution } from "../program";
import type { DiffResult } from "../provider-process";
import type { ResourceRecord } from "../state";
import { wrapSecrets, type Props } from "../wire";
import type { Op } from "./steps";

/** `diff` is the provider's answer for a resource the state holds (`old`); a new one has none. */
export function planned(old: ResourceRecord | undefined, diff: DiffResult | undefined): Op {
  if (!old) return "create";
  if (diff!.replaces.length > 0) return "replace";
  // A resource that was made but not finished is updated even without changes, as Pulumi's step generator
  // does ("If resource was unchanged, but there were initialization errors, generate an empty update step").
  if (diff!.changes === "none" && !old.initErrors?.length) return "same";
  return "update";
}

/** What a preview tells the program of a resource: outputs it cannot know yet stay unknown. */
export function previewed(
  op: Op,
  old: ResourceRecord | undefined,
  checked: Props,
  secretNames: string[],
): Resolution {
  if (op === "same") return { id: old!.id, outputs: wrapSecrets(old!.outputs, old!.secretOutputs) };
  if (op === "update")
    return { id: old!.id, outputs: wrapSecrets({ ...old!.outputs, ...checked }, secretNames) };
  return { outputs: wrapSecrets(checked, secretNames) };
}
