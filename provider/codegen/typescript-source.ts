/**
 * The public TypeScript of the resources, written from their definitions: plain interfaces for the
 * arguments, and classes whose output fields are `declare`d
 * (docs/design/pulumi-machinery.md#runtime-mocks-and-jest), so the package's declarations
 * hold nothing of zod. One module per resource kind exports its dynamic provider (provider/shim.ts).
 */
import type { AnyComponentDefinition } from "../framework/define-component";
import { argsOptional, type AnyDataSourceDefinition } from "../framework/define-data-source";
import { describedWithId, type AnyResourceDefinition } from "../framework/define-resource";
import {
  pascal,
  refName,
  withoutNull,
  type ComponentSchemas,
  type DataSourceSchemas,
  type JsonSchema,
  type ResourceSchemas,
} from "./json-schema";

export const GENERATED_NOTICE =
  "// Generated from the resource definitions (provider/resources) by `npm run build`; edit those, not this.";

export function resourcesModule(
  resources: { definition: AnyResourceDefinition; schemas: ResourceSchemas }[],
  components: { definition: AnyComponentDefinition; schemas: ComponentSchemas }[],
): string {
  const named = new NamedTypes();
  const classes = [
    ...resources.map(({ definition, schemas }) => resourceSource(definition, schemas, named)),
    ...components.map(({ definition, schemas }) => componentSource(definition, schemas, named)),
  ];
  const imports = [
    'import * as pulumi from "@pulumi/pulumi";',
    'import { componentArguments, initializeComponent } from "../component-registration";',
    'import { resourceArguments } from "../registration";',
  ];
  return indented(
    [`${GENERATED_NOTICE}\n${imports.join("\n")}`, ...named.interfaces(), ...classes].join("\n\n"),
  );
}

const DATA_SOURCES_NOTICE =
  "// Generated from the data source definitions (provider/datasources) by `npm run build`; edit those, not this.";

/** The public data source functions, each in its Promise and its Output form, and the types they take and give. */
export function dataSourcesModule(
  dataSources: { definition: AnyDataSourceDefinition; schemas: DataSourceSchemas }[],
): string {
  const named = new NamedTypes();
  const own: string[] = [];
  const functions = dataSources.map(({ definition, schemas }) => {
    const { name } = definition;
    const args = schemas.args && `${pascal(name)}Args`;
    if (schemas.args && args)
      own.push(named.declared(args, schemas.args, `The arguments of {@link ${name}}.`));
    const result = schemas.resultType
      ? named.type({ $ref: `#/$defs/${schemas.resultType}` }, schemas.result.$defs)
      : `${pascal(name)}Result`;
    if (!schemas.resultType)
      own.push(named.declared(result, schemas.result, `What {@link ${name}} returns.`));
    return functionSource(definition, args, result);
  });
  const imports = [
    'import type * as pulumi from "@pulumi/pulumi";',
    'import { callDataSource, dataSourceOutput } from "../datasources/call";',
    'import type { DataSourceOptions, InputArgs } from "../datasources/options";',
  ];
  const types = indented(
    [`${DATA_SOURCES_NOTICE}\n${imports.join("\n")}`, ...named.interfaces(), ...own].join("\n\n"),
  );
  return `${types}\n${functions.join("\n\n")}\n`;
}

/** A data source's Promise form, documented with its description and example, and its Output form. */
function functionSource(
  definition: AnyDataSourceDefinition,
  args: string | undefined,
  result: string,
): string {
  const { name } = definition;
  const fallback = args && argsOptional(definition) ? " = {}" : "";
  const docLines = [...definition.description.split("\n"), "", "@example", ...definition.example.split("\n")];
  const argsParameter = args ? `args: ${args}${fallback}, ` : "";
  const passed = args ? "args" : "{}";
  return [
    "/**",
    ...docLines.map((line) => (line === "" ? " *" : ` * ${line.replace(/\*\//g, "*\\/")}`)),
    " */",
    `export function ${name}(${argsParameter}opts?: DataSourceOptions): Promise<${result}> {`,
    `  return callDataSource("${name}", ${passed}, opts) as Promise<${result}>;`,
    "}",
    "",
    `/** \`${name}\` ${args ? "over Inputs" : "as an Output"}. */`,
    `export function ${name}Output(`,
    ...(args ? [`  args: InputArgs<${args}>${fallback},`] : []),
    "  opts?: DataSourceOptions,",
    `): pulumi.Output<${result}> {`,
    `  return dataSourceOutput("${name}", ${passed}, opts) as pulumi.Output<${result}>;`,
    "}",
  ].join("\n");
}

/** `export = providers.<Kind>`: the module Pulumi stores as one require (provider/shim.ts). */
export function kindModule(kind: string, exportPath: string): string {
  return [
    GENERATED_NOTICE,
    `/** \`${exportPath}\`: this module's exports ARE the ${kind} provider (see provider/shim.ts). */`,
    'import { providers } from "../../dynamic";',
    `export = providers.${kind};`,
    "",
  ].join("\n");
}

/** The interface of a class's arguments: each input as a `pulumi.Input`. */
function argsInterface(name: string, inputs: JsonSchema, named: NamedTypes): string {
  const args = Object.entries(inputs.properties ?? {}).map(([field, schema]) => {
    const optional = !inputs.required?.includes(field);
    return `${doc(schema.description)}${field}${optional ? "?" : ""}: pulumi.Input<${named.type(schema, inputs.$defs)}>;`;
  });
  return [
    `/** The arguments of {@link ${name}}. */`,
    `export interface ${name}Args {\n${args.join("\n")}\n}`,
  ].join("\n");
}

/**
 * A component's class: its children are declared by `initialize` in the program, or, when the component
 * registers as a remote one, by the native plugin's Construct.
 */
function componentSource(
  definition: AnyComponentDefinition,
  schemas: ComponentSchemas,
  named: NamedTypes,
): string {
  const { name } = definition;
  const outputs = Object.entries(fields(schemas.outputs, named)).map(
    ([field, { type, description }]) =>
      `${doc(description)}declare readonly ${field}: pulumi.Output<${type}>;`,
  );
  return [
    argsInterface(name, schemas.inputs, named),
    "",
    doc(definition.description).trimEnd(),
    `export class ${name} extends pulumi.ComponentResource {`,
    ...outputs,
    "",
    `  constructor(name: string, args: ${name}Args, opts?: pulumi.ComponentResourceOptions) {`,
    `    super(...componentArguments("${name}", name, args, opts));`,
    "  }",
    "",
    "  /** Declares the children; Pulumi calls it while constructing a component it does not have the plugin construct. */",
    "  protected override initialize(args: pulumi.Inputs, _opts?: unknown, name?: string): Promise<unknown> {",
    `    return initializeComponent("${name}", this, args, name ?? "", (outputs) => this.registerOutputs(outputs));`,
    "  }",
    "}",
  ].join("\n");
}

function resourceSource(
  definition: AnyResourceDefinition,
  schemas: ResourceSchemas,
  named: NamedTypes,
): string {
  const { name } = definition;
  const state = { ...fields(schemas.state, named), ...fields(schemas.outputs, named) };
  const outputs = Object.entries(state).map(([field, { type, description }]) => {
    const secret = schemas.secret.includes(field) ? " A secret: Pulumi stores it encrypted." : "";
    return `${doc(description && description + secret)}declare readonly ${field}: pulumi.Output<${type}>;`;
  });
  return [
    argsInterface(name, schemas.inputs, named),
    "",
    doc(describedWithId(definition)).trimEnd(),
    `export class ${name} extends pulumi.dynamic.Resource {`,
    ...outputs,
    "",
    `  constructor(name: string, args: ${name}Args, opts?: pulumi.CustomResourceOptions) {`,
    `    super(...resourceArguments("${name}", name, args, opts));`,
    "  }",
    "}",
  ].join("\n");
}

/** The fields of an object schema as output types: a field that may be absent holds undefined. */
function fields(
  schema: JsonSchema,
  named: NamedTypes,
): Record<string, { type: string; description?: string }> {
  return Object.fromEntries(
    Object.entries(schema.properties ?? {}).map(([field, property]) => {
      const type = named.type(property, schema.$defs);
      const absent = schema.required?.includes(field) ? "" : " | undefined";
      return [field, { type: `${type}${absent}`, description: property.description }];
    }),
  );
}

/** Indents the written lines by their braces: two spaces a level, as the rest of the repository does. */
function indented(text: string): string {
  let depth = 0;
  const lines = text.split("\n").map((raw) => {
    const line = raw.trim();
    if (line.startsWith("}")) depth--;
    const out = line === "" ? "" : `${"  ".repeat(depth)}${line}`;
    if (line.endsWith("{")) depth++;
    return out;
  });
  return `${lines.join("\n")}\n`;
}

function doc(text: string | undefined): string {
  return text ? `/** ${text.replace(/\*\//g, "*\\/")} */\n` : "";
}

/** TypeScript for JSON Schemas; named schemas ($defs) become exported interfaces, written once. */
class NamedTypes {
  private readonly written = new Map<string, string>();

  interfaces(): string[] {
    return [...this.written.values()];
  }

  type(schema: JsonSchema, defs: Record<string, JsonSchema> = {}): string {
    const { schema: present, nullable } = withoutNull(schema);
    const type = this.present(present, defs);
    return nullable ? `${type} | null` : type;
  }

  private present(schema: JsonSchema, defs: Record<string, JsonSchema>): string {
    if (schema.$ref) return this.named(refName(schema.$ref), defs);
    if (schema.anyOf) return schema.anyOf.map((option) => this.type(option, defs)).join(" | ");
    if (Array.isArray(schema.type)) return schema.type.map((type) => this.type({ type }, defs)).join(" | ");
    if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(" | ");
    if (schema.const !== undefined) return JSON.stringify(schema.const);
    switch (schema.type) {
      case "string":
        return "string";
      case "number":
      case "integer":
        return "number";
      case "boolean":
        return "boolean";
      case "array": {
        const item = this.type(schema.items ?? {}, defs);
        return /[ |]/.test(item) ? `(${item})[]` : `${item}[]`;
      }
      case "object":
        if (schema.properties) return `{\n${this.members(schema, defs).join("\n")}\n}`;
        return `Record<string, ${this.type(typeof schema.additionalProperties === "object" ? schema.additionalProperties : {}, defs)}>`;
      default:
        return "unknown";
    }
  }

  /** An interface named `name` of the object schema's fields, which may name types of its $defs. */
  declared(name: string, schema: JsonSchema, description: string): string {
    const members = this.members(schema, schema.$defs ?? {}, true);
    return `${doc(description)}export interface ${name} {\n${members.join("\n")}\n}`;
  }

  /** `defaults`: a field's doc comment says its default (an argument's; a stored value's default is no news to a reader). */
  private members(schema: JsonSchema, defs: Record<string, JsonSchema>, defaults = false): string[] {
    return Object.entries(schema.properties ?? {}).map(([field, property]) => {
      const optional = schema.required?.includes(field) ? "" : "?";
      const fallback =
        defaults && property.default !== undefined
          ? ` @defaultValue ${JSON.stringify(property.default)}`
          : "";
      const described = property.description && `${property.description}${fallback}`;
      return `${doc(described)}${field}${optional}: ${this.type(property, defs)};`;
    });
  }

  private named(name: string, defs: Record<string, JsonSchema>): string {
    const schema = defs[name];
    if (!schema) throw new Error(`no definition of the type ${name}`);
    if (!this.written.has(name)) {
      this.written.set(name, "");
      this.written.set(
        name,
        `${doc(schema.description)}export interface ${name} {\n${this.members(schema, defs).join("\n")}\n}`,
      );
    }
    return name;
  }
}
