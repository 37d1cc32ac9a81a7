/** The package's resources as the policies tell them apart, by either of their type tokens (../tokens.ts). */
import { nameOfToken } from "../tokens";

export type ResourceKind = "Instance" | "IdleClosePolicy" | "PersonalImage" | "Fleet";

const KINDS: readonly ResourceKind[] = ["Instance", "IdleClosePolicy", "PersonalImage", "Fleet"];

/** The kind of one of this package's resources, from either token; undefined for anything else. */
export function kindOf(type: string): ResourceKind | undefined {
  const name = nameOfToken(type);
  return KINDS.find((kind) => kind === name);
}
