/**
 * What the cost guard's policies read of a stack: the package's resources under either type token (the
 * dynamic providers' `pulumi-nodejs:dynamic/gpucloud:<Name>` and the native plugin's
 * `gpucloud:index:<Name>`), and their properties with the unknowns of a preview kept apart. An Instance's
 * inputs are read as its definition declares them: a new input of the Instance is read here with no line
 * of its own.
 *
 * The policy SDK hands properties behind a proxy that throws its UnknownValueError when a value is not
 * known until `up`; a policy that lets it through is reported by the SDK as "can't run during preview"
 * (advisory). The policies here read each property through `read`, decide what they can from the known
 * values, and hand an unknown back only when the answer depends on it: no false violation, no false pass.
 */
import type { PolicyResource, PolicyResourceOptions } from "@pulumi/policy";
import { z } from "zod";
import { memberIndex } from "../fleet/member-names";
import { InstanceInputs } from "../resources/instance/inputs";
import { kindOf } from "./kinds";

/** The policy SDK's error for an unknown: exported at run time, left out of its declarations. */
const { UnknownValueError } = require("@pulumi/policy") as {
  UnknownValueError: new (...args: never[]) => Error;
};

export { kindOf, type ResourceKind } from "./kinds";

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

type Declared = z.input<typeof InstanceInputs>;

/**
 * Each input of the Instance as a program declares it: absent, or of a type the input does not take (its
 * Check refuses it), it is the input's default or undefined.
 */
export type DeclaredInputs = { [K in keyof Declared]-?: Maybe<Declared[K] | undefined> };

/** What the policies need of one Instance, read from its inputs (a resource policy) or outputs (a stack policy). */
export interface InstanceFacts extends Omit<DeclaredInputs, "running"> {
  /** The resource's name in the program: what messages call it (never its title, which may be secret). */
  name: string;
  urn: string;
  /** Declared power state; absent means running, its default. */
  running: Maybe<boolean>;
  /** An output: set once the instance exists. */
  instanceUuid: Maybe<string | undefined>;
  /** The model an existing instance runs on (an output): gpuUuid or one of its fallbacks. */
  runningGpuUuid: Maybe<string | undefined>;
  /** The Fleet it is a member of, if any. */
  fleet?: FleetMembership;
}

/** The JavaScript types a value of a JSON Schema has (`integer` is a number); those of its items for an array. */
interface ValueTypes {
  types: Set<string>;
  items: Set<string>;
}

function valueTypes(
  schema: Record<string, unknown>,
  into: ValueTypes = { types: new Set(), items: new Set() },
) {
  for (const type of [schema.type ?? []].flat() as string[]) {
    into.types.add(type === "integer" ? "number" : type);
    if (type === "array" && typeof schema.items === "object" && schema.items !== null) {
      valueTypes(schema.items as Record<string, unknown>, { types: into.items, items: new Set() });
    }
  }
  for (const option of [...((schema.anyOf ?? []) as object[]), ...((schema.oneOf ?? []) as object[])]) {
    valueTypes(option as Record<string, unknown>, into);
  }
  return into;
}

/** Each input of the definition: the types its schema takes, and its default. */
const DECLARED = Object.entries(InstanceInputs.shape as Record<string, z.ZodType>).map(([name, schema]) => ({
  name,
  ...valueTypes(z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>),
  fallback: schema.safeParse(undefined).data as unknown,
}));

/** A value read through the policy SDK's proxy, as an input of `types` takes it; `fallback` otherwise. */
function declared(value: unknown, input: ValueTypes & { fallback: unknown }): unknown {
  if (value instanceof Unknown) return value;
  if (Array.isArray(value) && input.types.has("array")) return listOf(value, input.items);
  return input.types.has(typeof value) && value !== null ? value : input.fallback;
}

function declaredInputs(props: Record<string, unknown>): DeclaredInputs {
  return Object.fromEntries(
    DECLARED.map((input) => [input.name, declared(read(props, input.name), input)]),
  ) as DeclaredInputs;
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
  const inputs = declaredInputs(resource.props);
  const fleet = membershipOf(resource.name, resource.opts?.parent);
  return {
    ...(fleet ? { fleet } : {}),
    ...inputs,
    name: resource.name,
    urn: resource.urn,
    running: inputs.running instanceof Unknown ? inputs.running : inputs.running !== false,
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
 * A list whose items are of `types`, or an Unknown when any of its items is not known yet. Items of
 * other types are left out: the provider's check refuses them.
 */
function listOf<T>(value: unknown[], types: ReadonlySet<string>): Maybe<T[]> {
  const items: T[] = [];
  for (let i = 0; i < value.length; i++) {
    // Each item is read through the SDK's proxy: an unknown item throws as an unknown property does.
    const item = read(value as unknown as Record<string, unknown>, String(i));
    if (item instanceof Unknown) return item;
    if (types.has(typeof item)) items.push(item as T);
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
