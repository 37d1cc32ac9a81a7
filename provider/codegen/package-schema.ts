/**
 * The Pulumi package schema (docs/design/contracts.md#the-native-plugin) from the resource, component
 * and data source definitions and the settings table: what the native plugin's GetSchema serves and what SDKs for other languages are
 * generated from.
 */
import type { AnyComponentDefinition } from "../framework/define-component";
import type { AnyDataSourceDefinition } from "../framework/define-data-source";
import { describedWithId, type AnyResourceDefinition } from "../framework/define-resource";
import { PACKAGE, token } from "../tokens";
import { SETTINGS } from "../settings";
import {
  pascal,
  refName,
  withoutNull,
  type ComponentSchemas,
  type DataSourceSchemas,
  type JsonSchema,
  type ResourceSchemas,
} from "./json-schema";

export interface PropertySpec {
  type?: string;
  items?: PropertySpec;
  additionalProperties?: PropertySpec;
  $ref?: string;
  oneOf?: PropertySpec[];
  description?: string;
  default?: string | number | boolean;
  secret?: boolean;
  willReplaceOnChanges?: boolean;
  defaultInfo?: { environment: string[] };
}

export interface ObjectTypeSpec {
  type: "object";
  description?: string;
  properties: Record<string, PropertySpec>;
  required?: string[];
}

export interface ResourceSpec {
  /** A component resource: the engine has the provider's Construct make it and its children. */
  isComponent?: true;
  description: string;
  properties: Record<string, PropertySpec>;
  required?: string[];
  inputProperties: Record<string, PropertySpec>;
  requiredInputs?: string[];
}

export interface FunctionSpec {
  description: string;
  inputs?: Omit<ObjectTypeSpec, "type">;
  outputs: Omit<ObjectTypeSpec, "type">;
}

export interface PackageSchema {
  name: string;
  displayName: string;
  description: string;
  version: string;
  license: string;
  keywords: string[];
  config: { variables: Record<string, PropertySpec> };
  provider: { description: string; inputProperties: Record<string, PropertySpec> };
  resources: Record<string, ResourceSpec>;
  functions: Record<string, FunctionSpec>;
  types: Record<string, ObjectTypeSpec>;
}

export interface SchemaSources {
  version: string;
  resources: { definition: AnyResourceDefinition; schemas: ResourceSchemas }[];
  components: { definition: AnyComponentDefinition; schemas: ComponentSchemas }[];
  dataSources: { definition: AnyDataSourceDefinition; schemas: DataSourceSchemas }[];
}

export function packageSchema(sources: SchemaSources): PackageSchema {
  const types = new TypeTable();
  const variables = configVariables();
  const resources = Object.fromEntries([
    ...sources.resources.map(({ definition, schemas }) => [
      token(definition.name),
      resourceSpec(types, definition, schemas),
    ]),
    ...sources.components.map(({ definition, schemas }) => [
      token(definition.name),
      componentSpec(types, definition, schemas),
    ]),
  ]);
  const functions = Object.fromEntries(
    sources.dataSources.map(({ definition, schemas }) => [
      token(definition.name),
      functionSpec(types, definition, schemas),
    ]),
  );
  return {
    name: PACKAGE,
    displayName: "GPU cloud",
    description: "Rented GPU instances, their idle policies and saved images on the GPU cloud (open API v2).",
    version: sources.version,
    license: "Apache-2.0",
    keywords: ["pulumi", PACKAGE, "gpu", "category/cloud"],
    config: { variables },
    provider: { description: "Where the GPU cloud is, and with which key.", inputProperties: variables },
    resources,
    functions,
    types: types.sorted(),
  };
}

function configVariables(): Record<string, PropertySpec> {
  return Object.fromEntries(
    Object.entries(SETTINGS).map(([name, s]) => {
      const spec: PropertySpec = { type: s.type, description: s.description };
      if ("secret" in s) spec.secret = true;
      if ("default" in s) spec.default = s.default;
      spec.defaultInfo = { environment: [s.env] };
      return [name, spec];
    }),
  );
}

function resourceSpec(
  types: TypeTable,
  definition: AnyResourceDefinition,
  schemas: ResourceSchemas,
): ResourceSpec {
  const inputs = types.object(schemas.inputs, schemas.inputs.$defs, definition.name);
  const state = types.object(schemas.state, schemas.state.$defs, definition.name);
  const outputs = types.object(schemas.outputs, schemas.outputs.$defs, definition.name);
  for (const name of schemas.replaceOnChanges) inputs.properties[name].willReplaceOnChanges = true;
  for (const name of schemas.secret) outputs.properties[name].secret = true;
  const required = [
    ...(state.required ?? []).filter((name) => !(name in outputs.properties)),
    ...(outputs.required ?? []),
  ];
  return {
    description: describedWithId(definition),
    properties: { ...state.properties, ...outputs.properties },
    ...(required.length > 0 ? { required } : {}),
    inputProperties: inputs.properties,
    ...(inputs.required ? { requiredInputs: inputs.required } : {}),
  };
}

function componentSpec(
  types: TypeTable,
  definition: AnyComponentDefinition,
  schemas: ComponentSchemas,
): ResourceSpec {
  const inputs = types.object(schemas.inputs, schemas.inputs.$defs, definition.name);
  const outputs = types.object(schemas.outputs, schemas.outputs.$defs, definition.name);
  return {
    isComponent: true,
    description: definition.description,
    properties: outputs.properties,
    ...(outputs.required ? { required: outputs.required } : {}),
    inputProperties: inputs.properties,
    ...(inputs.required ? { requiredInputs: inputs.required } : {}),
  };
}

function functionSpec(
  types: TypeTable,
  definition: AnyDataSourceDefinition,
  schemas: DataSourceSchemas,
): FunctionSpec {
  const owner = pascal(definition.name);
  const args = schemas.args && types.object(schemas.args, schemas.args.$defs, `${owner}Args`);
  const result = types.object(schemas.result, schemas.result.$defs, `${owner}Result`);
  return {
    description: definition.description,
    ...(args ? { inputs: withoutType(args) } : {}),
    outputs: withoutType(result),
  };
}

function withoutType({ type: _type, ...rest }: ObjectTypeSpec): Omit<ObjectTypeSpec, "type"> {
  return rest;
}

/** The package's object types: named in the JSON Schema ($defs), or named for where they are used. */
class TypeTable {
  private readonly types: Record<string, ObjectTypeSpec> = {};
  private readonly defining = new Set<string>();

  /** An object's properties as Pulumi properties; a property that may be null is not required. */
  object(schema: JsonSchema, defs: Record<string, JsonSchema> = {}, owner: string): ObjectTypeSpec {
    const properties: Record<string, PropertySpec> = {};
    const required: string[] = [];
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      const { spec, nullable } = this.property(property, defs, `${owner}${pascal(name)}`);
      properties[name] = spec;
      if (schema.required?.includes(name) && !nullable) required.push(name);
    }
    return {
      type: "object",
      ...(schema.description ? { description: schema.description } : {}),
      properties,
      ...(required.length > 0 ? { required } : {}),
    };
  }

  sorted(): Record<string, ObjectTypeSpec> {
    return Object.fromEntries(Object.entries(this.types).sort(([a], [b]) => a.localeCompare(b)));
  }

  private property(
    schema: JsonSchema,
    defs: Record<string, JsonSchema>,
    name: string,
  ): { spec: PropertySpec; nullable: boolean } {
    const { schema: present, nullable } = withoutNull(schema);
    const spec = this.type(present, defs, name);
    if (present.description) spec.description = present.description;
    const fallback = present.default;
    if (typeof fallback === "string" || typeof fallback === "number" || typeof fallback === "boolean") {
      spec.default = fallback;
    }
    return { spec, nullable };
  }

  private type(schema: JsonSchema, defs: Record<string, JsonSchema>, name: string): PropertySpec {
    const inner = (s: JsonSchema, n: string) => this.type(withoutNull(s).schema, defs, n);
    if (schema.$ref) {
      const defName = refName(schema.$ref);
      return { $ref: this.define(defName, defs[defName], defs) };
    }
    if (schema.anyOf) return { oneOf: schema.anyOf.map((option, i) => inner(option, `${name}${i}`)) };
    // zod writes a union of primitives as a list of types.
    if (Array.isArray(schema.type)) return { oneOf: schema.type.map((type) => inner({ type }, name)) };
    switch (schema.type) {
      case "array":
        return { type: "array", items: inner(schema.items ?? {}, name) };
      case "object":
        if (schema.properties) return { $ref: this.define(name, schema, defs) };
        return {
          type: "object",
          additionalProperties: inner(
            typeof schema.additionalProperties === "object" ? schema.additionalProperties : {},
            name,
          ),
        };
      case "string":
      case "number":
      case "integer":
      case "boolean":
        return { type: schema.type };
      case undefined:
        return { $ref: "pulumi.json#/Any" };
      default:
        throw new Error(`${name}: no Pulumi type for JSON Schema type ${JSON.stringify(schema.type)}`);
    }
  }

  /** Registers the object type `name` and returns its reference; two different types of one name fail. */
  private define(name: string, schema: JsonSchema | undefined, defs: Record<string, JsonSchema>): string {
    if (!schema) throw new Error(`no definition of the type ${name}`);
    const typeToken = token(name);
    const ref = `#/types/${typeToken}`;
    // A type that refers to itself is already being defined.
    if (this.defining.has(typeToken)) return ref;
    this.defining.add(typeToken);
    const spec = this.object(schema, defs, name);
    this.defining.delete(typeToken);
    const known = this.types[typeToken];
    if (known && JSON.stringify(known) !== JSON.stringify(spec)) {
      throw new Error(`two different types are named ${typeToken}; name one of them otherwise`);
    }
    this.types[typeToken] = spec;
    return ref;
  }
}
