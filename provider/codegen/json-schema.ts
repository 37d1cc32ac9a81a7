/**
 * JSON Schema (draft 2020-12) is the common ground of the generators: zod writes it for the resource
 * definitions (z.toJSONSchema, so nothing here reads zod's internals), the TypeScript checker for the
 * data sources (./data-source-shapes.ts), and the package schema and the public declarations are
 * written from it.
 */
import { z } from "zod";
import type { AnyComponentDefinition } from "../framework/define-component";
import { diffRules, type AnyResourceDefinition } from "../framework/define-resource";

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  additionalProperties?: JsonSchema | boolean;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  description?: string;
  default?: unknown;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  format?: string;
  /**
   * A rule the checks enforce that no JSON Schema keyword says (a zod refine), in words: set beside the
   * refine with `.meta({ rule })`, for the reference pages.
   */
  rule?: string;
}

/** The schemas of one resource: its inputs as a program writes them and as state holds them, and its outputs. */
export interface ResourceSchemas {
  inputs: JsonSchema;
  state: JsonSchema;
  outputs: JsonSchema;
  secret: string[];
  replaceOnChanges: string[];
}

function fromZod(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  return z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
}

export function resourceSchemas(definition: AnyResourceDefinition): ResourceSchemas {
  const fields = Object.entries(definition.outputs);
  const outputs = z.object(Object.fromEntries(fields.map(([name, f]) => [name, f.schema])));
  return {
    inputs: fromZod(definition.inputs, "input"),
    state: fromZod(definition.inputs, "output"),
    outputs: fromZod(outputs, "output"),
    secret: fields.filter(([, f]) => f.secret).map(([name]) => name),
    replaceOnChanges: [
      ...(definition.update ? diffRules(definition).replaceOnChanges : Object.keys(definition.inputs.shape)),
    ],
  };
}

/** The schemas of one component: its inputs as a program writes them, and its outputs. */
export interface ComponentSchemas {
  inputs: JsonSchema;
  outputs: JsonSchema;
}

export function componentSchemas(definition: AnyComponentDefinition): ComponentSchemas {
  return {
    inputs: fromZod(definition.inputs, "input"),
    outputs: fromZod(z.object(definition.outputs), "output"),
  };
}

/** The schema without null: `[T, "null"]` and `anyOf [T, null]` become T. */
export function withoutNull(schema: JsonSchema): { schema: JsonSchema; nullable: boolean } {
  if (Array.isArray(schema.type) && schema.type.includes("null")) {
    const rest = schema.type.filter((t) => t !== "null");
    return { schema: { ...schema, type: rest.length === 1 ? rest[0] : rest }, nullable: true };
  }
  const options = schema.anyOf;
  if (options?.some((o) => o.type === "null")) {
    const rest = options.filter((o) => o.type !== "null");
    const { anyOf: _anyOf, ...outer } = schema;
    const inner = rest.length === 1 ? { ...rest[0], ...outer } : { ...outer, anyOf: rest };
    return { schema: inner, nullable: true };
  }
  return { schema, nullable: false };
}

/** The name a `$ref: "#/$defs/<name>"` points at. */
export function refName(ref: string): string {
  const prefix = "#/$defs/";
  if (!ref.startsWith(prefix)) throw new Error(`unsupported $ref ${ref}`);
  return ref.slice(prefix.length);
}

export function pascal(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}
