/**
 * The names the state keeps resources under. A program registers dynamic types; a front door may keep
 * them under its own (the native door's `gpucloud:index:Instance`), so a URN is mapped before the state
 * or the policy packs see it.
 */
import type { FrontDoor, ResourceRef } from "../front-door";
import type { Registration } from "../program";
import type { ResourceRecord } from "../state";

/**
 * The URN under which the state keeps a resource of the program: each type of its qualified type (its
 * parents' and its own) as the front door maps it.
 */
export function stateUrn(programUrn: string, door: FrontDoor): string {
  const parts = programUrn.split("::");
  if (parts.length < 4) return programUrn;
  parts[2] = parts[2]
    .split("$")
    .map((type) => door.stateType(type))
    .join("$");
  return parts.join("::");
}

/** A registration's parent under its state URN, ready to spread into a record. */
export function parentOf(registration: Registration, door: FrontDoor): { parent?: string } {
  return registration.parent ? { parent: stateUrn(registration.parent, door) } : {};
}

export function refOf(record: ResourceRecord): ResourceRef {
  return { urn: record.urn, type: record.type, provider: record.provider };
}
