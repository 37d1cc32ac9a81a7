/**
 * One declarative definition per component resource, beside the resources' (./define-resource.ts): a
 * component has no provider operations of its own, only children it declares from its inputs. Its
 * inputs (zod, each field described once), its outputs, its rules across inputs and what a change of
 * each input does feed the class TypeScript programs construct, the native plugin's Construct, the
 * package schema (`isComponent`) and the reference page (docs/design/contracts.md#fleet).
 */
import type * as pulumi from "@pulumi/pulumi";
import type { z } from "zod";
import { checkInputs, type CheckFailure, type CrossFieldRule } from "./check";
import type { Inputs } from "./define-resource";
import { crossFieldRules } from "./input-rules";

/** Makes the component's children: the same declarations become dynamic or native resources (see ../components/kits.ts). */
export interface ChildKit {
  /** A custom resource of the package, its outputs readable as its properties (`instanceUuid`, ...). */
  resource(
    kind: string,
    name: string,
    args: Record<string, unknown>,
    opts: pulumi.CustomResourceOptions,
  ): pulumi.CustomResource & Record<string, pulumi.Output<unknown>>;
}

/** Where the component's body declares its children: the component itself (their parent), its name, the kit. */
export interface ComponentScope {
  component: pulumi.ComponentResource;
  name: string;
  kit: ChildKit;
}

export interface ComponentDefinition<N extends string, S extends z.ZodObject> {
  /** The class users construct, and the last part of its type token. */
  name: N;
  /** For the class, the schema and the reference page; Markdown. */
  description: string;
  /** The reference page's example: lines of a program's `export = async () => { ... }` body (see ResourceDefinition). */
  example: readonly string[];
  inputs: S;
  /** Each output's schema, described once. */
  outputs: Record<string, z.ZodType>;
  /** Rules across inputs that belong to none of them, run after those the inputs declare. */
  checks?: CrossFieldRule<Inputs<S>>[];
  /** What a change of each input does, in words, for the reference page: "adds members at the end, ...". */
  changes: Record<keyof Inputs<S> & string, string>;
  /**
   * Declares the children from the checked inputs (every input known but those the checks let stay unknown
   * at preview) and the inputs as the program gave them (Outputs keep their dependencies and secrets);
   * returns the outputs.
   */
  declare(
    scope: ComponentScope,
    checked: Inputs<S>,
    given: Record<string, pulumi.Input<unknown>>,
  ): Record<string, pulumi.Input<unknown>>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyComponentDefinition = ComponentDefinition<string, any>;

/** Names the definition's types; everything else is derived from it. */
export function defineComponent<N extends string, S extends z.ZodObject>(
  definition: ComponentDefinition<N, S>,
): ComponentDefinition<N, S> {
  return definition;
}

/**
 * The component's inputs as they arrive on the wire (unknowns of a preview as the engine's sentinel,
 * secrets unwrapped and named in `secrets`), checked field by field and then across fields, as a
 * resource's Check does.
 */
export function checkComponent(
  definition: AnyComponentDefinition,
  wire: Record<string, unknown>,
  secrets: ReadonlySet<string>,
): { inputs: Record<string, unknown>; failures: CheckFailure[] } {
  return checkInputs(definition.inputs, wire, componentChecks(definition), {}, secrets);
}

/** Every rule across a component's inputs, in the order Check runs them (see ./input-rules.ts). */
export function componentChecks(
  definition: AnyComponentDefinition,
): CrossFieldRule<Record<string, unknown>>[] {
  return crossFieldRules(definition.inputs, definition.checks);
}
