/**
 * One declarative definition per resource, in the spirit of pulumi-go-provider's `infer` and the
 * Terraform plugin framework's schemas: its inputs (zod, each field described once with its rules:
 * ./input-rules.ts), its outputs and where each is read off the cloud's record, and its operations. The dynamic provider, the resource class, the registration and the package
 * schema are all derived from it (./dynamic-provider.ts, ../codegen/).
 */
import type { z } from "zod";
import type { AutonameRule } from "./autoname";
import type { CheckFailure, CrossFieldRule } from "./check";
import { crossFieldRules, declaredDiffRules } from "./input-rules";
import type { ProviderContext } from "./context";
import type { ProcessMemory } from "./process-memory";
import type { DiffRules } from "./diff";
import { plainJson } from "./plain-json";

/** One output: its schema (described once), how it is read off the cloud's record, whether it is secret or stable. */
export interface OutputField<C> {
  readonly schema: z.ZodType;
  readonly secret: boolean;
  /**
   * An in-place update never changes it (the id, what the resource was made of): the preview of an
   * update keeps its value and a diff names it stable; every other output is unknown in that preview.
   */
  readonly stable: boolean;
  read(cloud: C): unknown;
}

/** What an output is besides its value: `stable` when an in-place update never changes it. */
export interface OutputTraits {
  stable?: true;
}

export type OutputTable<C> = Record<string, OutputField<C>>;

/** The named fields of the cloud's record whose value (null where the record may leave it out) is a `T`. */
type FieldOf<C, T> = keyof {
  [
    K in keyof C as string extends K
      ? never
      : (undefined extends C[K] ? Exclude<C[K], undefined> | null : C[K]) extends T
        ? K
        : never
  ]: unknown;
} &
  string;

type FieldMaker<C> = <S extends z.ZodType>(
  schema: S,
  read: ((cloud: C) => z.output<S>) | FieldOf<C, z.output<S>>,
  traits?: OutputTraits,
) => OutputField<C>;

/**
 * The output fields of a resource whose cloud record is `C`: `field(z.string().describe("..."), read)`,
 * or `field.secret(...)` for a secret one, where `read` computes the value from the record or names
 * the record's field to copy (null when the cloud leaves it out); `{ stable: true }` after them for
 * an output an in-place update never changes.
 */
export function outputFields<C>(): FieldMaker<C> & { secret: FieldMaker<C> } {
  const maker =
    (secret: boolean): FieldMaker<C> =>
    (schema, read, traits = {}) => ({
      schema,
      secret,
      stable: traits.stable === true,
      read: typeof read === "function" ? read : (cloud: C) => cloud[read] ?? null,
    });
  return Object.assign(maker(false), { secret: maker(true) });
}

/** What an operation learnt of a resource: its inputs as the cloud has them now, and the cloud's record. */
export interface ResourceState<I, C> {
  inputs: I;
  cloud: C;
}

/** Every property the engine stored for a resource (its outputs, which carry every input). */
export type StoredState = Record<string, unknown>;

export type Inputs<S extends z.ZodObject> = z.output<S>;

export interface ResourceDefinition<N extends string, S extends z.ZodObject, C> {
  /** The type's name: the class users construct, and the last part of its type tokens. */
  name: N;
  /** For the class, the schema and the reference page; Markdown. */
  description: string;
  /** What the resource's id is, as the end of "Its id is ...": the description is followed by that sentence. */
  id: string;
  /**
   * The reference page's example: the lines of a Pulumi TypeScript program's `export = async () => { ... }`
   * body, with the package imported as `gpucloud` (test/provider/reference-docs.test.ts compiles it).
   */
  example: readonly string[];
  /** Each input's schema, with its rules declared on it (./input-rules.ts `withRules`). */
  inputs: S;
  outputs: OutputTable<C>;
  /** When a stored state must be made anew whatever the inputs (see DiffRules). */
  remade?: DiffRules<Inputs<S>>["remade"];
  /** Rules across inputs that belong to none of them, run by Check after those the inputs declare. */
  checks?: CrossFieldRule<Inputs<S>>[];
  /**
   * Rules that read the cloud (free, cached reads only), run by Check after every other rule when the
   * provider is configured (cloud-checks.ts); `failed` names the inputs already at fault.
   */
  cloudChecks?(
    ctx: ProviderContext,
    inputs: Partial<Inputs<S>>,
    failed: ReadonlySet<string>,
    olds: Readonly<Record<string, unknown>>,
  ): Promise<CheckFailure[]>;
  /** The input that names the resource in the cloud, which Check fills in when the program leaves it out. */
  autoname?: AutonameRule & { input: keyof Inputs<S> & string };
  create(ctx: ProviderContext, inputs: Inputs<S>): Promise<ResourceState<Inputs<S>, C> & { id: string }>;
  /**
   * Undefined when the cloud says the resource does not exist. `id` is set when the resource's id
   * changed (an Instance whose create was pending resolves to the instance's uuid).
   */
  read(
    ctx: ProviderContext,
    id: string,
    olds: Inputs<S>,
    stored: StoredState,
  ): Promise<(ResourceState<Inputs<S>, C> & { id?: string }) | undefined>;
  /** Without update, every input change replaces the resource. */
  update?(
    ctx: ProviderContext,
    id: string,
    olds: Inputs<S>,
    news: Inputs<S>,
  ): Promise<ResourceState<Inputs<S>, C>>;
  delete(ctx: ProviderContext, id: string, olds: Inputs<S>, stored: StoredState): Promise<void>;
  /**
   * Diff met this resource in state. No API call may be made here (a preview without changes makes
   * none); Instance remembers what it learns, in `process`, for the creates and reads of the same process.
   */
  diffed?(process: ProcessMemory, id: string, stored: StoredState): void;
  /**
   * Read by id alone (`pulumi import`, `get`): inputs and outputs from the cloud, such that check and
   * diff of those inputs against themselves show no change. Dynamic providers never reach it; the
   * native plugin does.
   */
  import(ctx: ProviderContext, id: string): Promise<ResourceState<Inputs<S>, C>>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyResourceDefinition = ResourceDefinition<string, z.ZodObject, any>;

/** Names the definition's types; everything else is derived from it. */
export function defineResource<N extends string, S extends z.ZodObject, C>(
  definition: ResourceDefinition<N, S, C>,
): ResourceDefinition<N, S, C> {
  return definition;
}

/** The resource described, then its id: what the schema and the class say of it. */
export function describedWithId(definition: AnyResourceDefinition): string {
  return `${definition.description} Its id is ${definition.id}.`;
}

/** The names of a definition's inputs, in declaration order. */
export function inputNames(definition: AnyResourceDefinition): string[] {
  return Object.keys(definition.inputs.shape);
}

/**
 * The outputs the engine stores: every input beside every output read off the cloud's record, and
 * `outputs` that no record holds (an Instance's pending create).
 */
export function stateOutputs<I, C>(
  definition: AnyResourceDefinition,
  state: { inputs: I; cloud?: C; outputs?: Record<string, unknown> },
): Record<string, unknown> {
  const read =
    state.cloud === undefined
      ? {}
      : Object.fromEntries(
          Object.entries(definition.outputs).map(([name, f]) => [name, f.read(state.cloud)]),
        );
  return plainJson({ ...state.inputs, ...read, ...state.outputs });
}

/** The stored inputs among a resource's stored properties (outputs carry every input); null is unset. */
export function storedInputs<I>(definition: AnyResourceDefinition, props: Record<string, unknown>): I {
  return Object.fromEntries(
    inputNames(definition)
      .filter((name) => Object.hasOwn(props, name) && props[name] !== null && props[name] !== undefined)
      .map((name) => [name, props[name]]),
  ) as I;
}

/**
 * Stored properties with every absent input at its schema default, so that an input added to a
 * definition with a default shows no change for resources stored before it existed.
 */
export function withInputDefaults(
  definition: AnyResourceDefinition,
  props: Record<string, unknown>,
): Record<string, unknown> {
  const filled = { ...props };
  for (const [name, schema] of Object.entries(definition.inputs.shape as Record<string, z.ZodType>)) {
    if (filled[name] !== undefined && filled[name] !== null) continue;
    const fallback = schema.safeParse(undefined);
    if (fallback.success && fallback.data !== undefined) filled[name] = fallback.data;
  }
  return filled;
}

// Returning a secret from a dynamic provider fails (docs/design/pulumi-machinery.md#secret-outputs).
/** Outputs Pulumi must encrypt: a provider cannot return secrets, so the class asks for them. */
export function secretOutputNames(definition: AnyResourceDefinition): string[] {
  return Object.entries(definition.outputs)
    .filter(([, f]) => f.secret)
    .map(([name]) => name);
}

/** The outputs an in-place update never changes. */
export function stableOutputNames(definition: AnyResourceDefinition): string[] {
  return Object.entries(definition.outputs)
    .filter(([, f]) => f.stable)
    .map(([name]) => name);
}

/** The diff rules of a resource: those its inputs declare, and when it is remade. */
export function diffRules(definition: AnyResourceDefinition): DiffRules<Record<string, unknown>> {
  return declaredDiffRules(definition.inputs, definition.remade);
}

/** Every rule across a resource's inputs, in the order Check runs them. */
export function checksOf(definition: AnyResourceDefinition): CrossFieldRule<Record<string, unknown>>[] {
  return crossFieldRules(definition.inputs, definition.checks);
}

/** Every property of the resource's state: its inputs, then the outputs that are not inputs. */
export function stateNames(definition: AnyResourceDefinition): string[] {
  return [...new Set([...inputNames(definition), ...Object.keys(definition.outputs)])];
}
