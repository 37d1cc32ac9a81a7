/**
 * Every component resource of the package: registering one is adding its definition here. The class
 * TypeScript programs construct, the native plugin's Construct, the package schema and the reference
 * pages are derived from this list, as the resources' are from ../resources.
 */
import { fleet } from "../fleet/definition";

export const COMPONENTS = [fleet] as const;

export type ComponentKind = (typeof COMPONENTS)[number]["name"];

export function componentDefinitionOf(kind: string): (typeof COMPONENTS)[number] | undefined {
  return COMPONENTS.find((d) => d.name === kind);
}
