/**
 * What the cost guard's policies read of a stack: the package's resources under either type token (the
 * dynamic providers' `pulumi-nodejs:dynamic/gpucloud:<Name>` and the native plugin's
 * `gpucloud:index:<Name>`), and their properties with the unknowns of a preview kept apart.
 *
 * The policy SDK hands properties behind a proxy that throws its UnknownValueError when a value is not
 * known until `up`; a policy that lets it through is reported by the SDK as "can't run during preview"
 * (advisory). The policies here read each property through `read`, decide what they can from the known
 * values, and hand an unknown back only when the answer depends on it: no false violation, no false pass.
 */
import type { PolicyResource, PolicyResourceOptions } from "@pulumi/policy";
import { memberIndex } from "../fleet/member-names";

/** The policy SDK's error for an unknown: exported at run time, left out of its declarations. */
const { UnknownValueError } = require("@pulumi/policy") as {
  UnknownValueError: new (...args: never[]) => Error;
};

export type ResourceKind = "Instance" | "IdleClosePolicy" | "PersonalImage" | "Fleet";

const DYNAMIC_PREFIX = "pulumi-nodejs:dynamic/gpucloud:";
const NATIVE_PREFIX = "gpucloud:index:";
const KINDS: readonly ResourceKind[] = ["Instance", "IdleClosePolicy", "PersonalImage", "Fleet"];

/** The kind of one of this package's resources, from either token; undefined for anything else. */
export function kindOf(type: string): ResourceKind | undefined {
  const name = type.startsWith(DYNAMIC_PREFIX)
    ? type.slice(DYNAMIC_PREFIX.length)
    : type.startsWith(NATIVE_PREFIX)
      ? type.slice(NATIVE_PREFIX.length)
      : undefined;
  return KINDS.find((kind) => kind === name);
}

/** A value a preview does not know yet, with the policy SDK's error for it. */
export class Unknown {
  constructor(readonly reason: Error) {}
}
export type Maybe<T> = T | Unknown;

/** `props[name]`, or an Unknown when the preview does not know it. */
export function read(props: Record<string, unknown>, name: string): unknown {
  try {
    return props[name];
  } catch (err) {
    if (err instanceof UnknownValueError) return new Unknown(err);
    throw err;
  }
}

/** The first of `values` a preview does not know, if any. */
export function firstUnknown(...values: unknown[]): Unknown | undefined {
  return values.find((v): v is Unknown => v instanceof Unknown);
}

/**
 * Hands a preview's unknown back to the policy SDK: it reports the policy as one that cannot run until
 * `up` (advisory), which is neither a violation nor a pass.
 */
export function undecided(unknown: Unknown): never {
  throw unknown.reason;
}

/** What the policies need of one Instance, read from its inputs (a resource policy) or outputs (a stack policy). */
export interface InstanceFacts {
  /** The resource's name in the program: what messages call it (never its title, which may be secret). */
  name: string;
  urn: string;
  /** Declared power state; absent means running. */
  running: Maybe<boolean>;
  podUuid: Maybe<string | undefined>;
  imageUuid: Maybe<string | undefined>;
  gpuUuid: Maybe<string | undefined>;
  /** The models tried after gpuUuid when it has no free cards, in order; absent means none. */
  fallbackGpuUuids: Maybe<string[] | undefined>;
  gpuNums: Maybe<number | undefined>;
  title: Maybe<string | undefined>;
  shutdownAt: Maybe<number | string | undefined>;
  instanceUuid: Maybe<string | undefined>;
  /** The model an existing instance runs on (an output): gpuUuid or one of its fallbacks. */
  runningGpuUuid: Maybe<string | undefined>;
  /** The Fleet it is a member of, if any. */
  fleet?: FleetMembership;
}

/** A fleet member's place: its Fleet (by name, for messages, and URN) and its index in it. */
export interface FleetMembership {
  name: string;
  urn: string;
  index: number;
}

export function instanceFacts(resource: {
  name: string;
  urn: string;
  props: Record<string, unknown>;
  opts?: Pick<PolicyResourceOptions, "parent">;
}): InstanceFacts {
  const get = (name: string) => read(resource.props, name);
  const running = get("running");
  const fleet = membershipOf(resource.name, resource.opts?.parent);
  return {
    ...(fleet ? { fleet } : {}),
    name: resource.name,
    urn: resource.urn,
    running: running instanceof Unknown ? running : running !== false,
    podUuid: ofType(get("podUuid"), "string"),
    imageUuid: ofType(get("imageUuid"), "string"),
    gpuUuid: ofType(get("gpuUuid"), "string"),
    fallbackGpuUuids: stringList(get("fallbackGpuUuids")),
    gpuNums: ofType(get("gpuNums"), "number"),
    title: ofType(get("title"), "string"),
    shutdownAt: ofType(get("shutdownAt"), "string", "number"),
    instanceUuid: ofType(get("instanceUuid"), "string"),
    runningGpuUuid: ofType(get("runningGpuUuid"), "string"),
  };
}

/**
 * The Fleet an Instance named `name` is a member of: its parent (the engine sends a resource's parent with
 * it) is a Fleet, and its name is one the Fleet gives its members.
 */
function membershipOf(name: string, parent: string | undefined): FleetMembership | undefined {
  if (!parent) return undefined;
  const { type, name: fleet } = urnParts(parent);
  const index = kindOf(type) === "Fleet" ? memberIndex(fleet, name) : undefined;
  return index === undefined ? undefined : { name: fleet, urn: parent, index };
}

/** A URN's type (the last of its qualified type's parts) and name: `urn:pulumi:<stack>::<project>::<parent type>$<type>::<name>`. */
function urnParts(urn: string): { type: string; name: string } {
  const [, , qualifiedType = "", ...name] = urn.split("::");
  return { type: qualifiedType.split("$").at(-1) ?? "", name: name.join("::") };
}

interface TypeNames {
  string: string;
  number: number;
}

/** The value when it is of one of `types` or unknown; undefined otherwise (absent, or not what the input takes). */
export function ofType<K extends keyof TypeNames>(
  value: unknown,
  ...types: K[]
): Maybe<TypeNames[K] | undefined> {
  if (value instanceof Unknown) return value;
  return (types as string[]).includes(typeof value) ? (value as TypeNames[K]) : undefined;
}

/**
 * A list of strings, or an Unknown when the list or any of its items is not known yet; undefined when
 * absent or not a list. Items that are not strings are left out: the provider's check refuses them.
 */
function stringList(value: unknown): Maybe<string[] | undefined> {
  if (value instanceof Unknown) return value;
  if (!Array.isArray(value)) return undefined;
  const items: string[] = [];
  for (let i = 0; i < value.length; i++) {
    // Each item is read through the SDK's proxy: an unknown item throws as an unknown property does.
    const item = read(value as unknown as Record<string, unknown>, String(i));
    if (item instanceof Unknown) return item;
    if (typeof item === "string") items.push(item);
  }
  return items;
}

/** The stack's Instances, with their facts. */
export function instancesOf(resources: readonly PolicyResource[]): InstanceFacts[] {
  return resources.filter((r) => kindOf(r.type) === "Instance").map(instanceFacts);
}

/** `name` quoted as messages show resources, and a list of them: `"fleet-0", "fleet-1" and "fleet-2"`. */
export function quoted(names: readonly string[]): string {
  const all = names.map((n) => `"${n}"`);
  return all.length <= 1 ? (all[0] ?? "") : `${all.slice(0, -1).join(", ")} and ${all.at(-1)}`;
}
