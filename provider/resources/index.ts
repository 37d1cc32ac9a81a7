/**
 * Every resource of the package: registering a resource is adding its definition here. The dynamic
 * providers, the resource classes, their `pulumi-gpucloud/dynamic/<kind>` modules and the package
 * schema are derived from this list (`npm run build` regenerates what is generated).
 */
import { idleClosePolicy } from "./idle-close-policy";
import { instance } from "./instance/definition";
import { personalImage } from "./personal-image";

export const RESOURCES = [instance, idleClosePolicy, personalImage] as const;

export type ResourceKind = (typeof RESOURCES)[number]["name"];

export function definitionOf(kind: ResourceKind): (typeof RESOURCES)[number] {
  const definition = RESOURCES.find((d) => d.name === kind);
  if (!definition) throw new Error(`no resource named ${kind}`);
  return definition;
}
