/**
 * JSON Schema (draft 2020-12) is the common ground of the generators: zod writes it for the resource
 * and data source definitions (z.toJSONSchema, so nothing here reads zod's internals), and the package
 * schema, the public declarations and the reference pages are written from it.
 */
import { z } from "zod";
import type { AnyComponentDefinition } from "../framework/define-component";
import type { AnyDataSourceDefinition } from "../framework/define-data-source";
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

/** The schemas of one data source: its arguments as a program writes them (absent when it takes none), and its result. */
export interface DataSourceSchemas {
  args?: JsonSchema;
  result: JsonSchema;
  /** The type the result is, when its definition names one (`GpuModel`); it is in the result's $defs. */
  resultType?: string;
}

export function dataSourceSchemas(definition: AnyDataSourceDefinition): DataSourceSchemas {
  return {
    ...(definition.args ? { args: inlineRoot(fromZod(definition.args, "input")) } : {}),
    ...resultSchemas(fromZod(definition.result, "output")),
  };
}

/**
 * A function's arguments and result are not types of the package schema: a root that names a type
 * (`GpuModel`) is written out in place, without the type's description (the function has its own).
 */
function inlineRoot(schema: JsonSchema): JsonSchema {
  if (!schema.$ref) return schema;
  const { $defs = {} } = schema;
  const { description: _description, ...named } = $defs[refName(schema.$ref)];
  return { ...named, $defs };
}

function resultSchemas(schema: JsonSchema): Pick<DataSourceSchemas, "result" | "resultType"> {
  const result = inlineRoot(schema);
  return schema.$ref ? { result, resultType: refName(schema.$ref) } : { result };
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
