/**
 * The public TypeScript of the resources, written from their definitions: plain interfaces for the
 * arguments, and classes whose output fields are `declare`d
 * (docs/design/pulumi-machinery.md#runtime-mocks-and-jest), so the package's declarations
 * hold nothing of zod. One module per resource kind exports its dynamic provider (provider/shim.ts).
 */
import type { AnyComponentDefinition } from "../framework/define-component";
import { describedWithId, type AnyResourceDefinition } from "../framework/define-resource";
import {
  refName,
  withoutNull,
  type ComponentSchemas,
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

  private members(schema: JsonSchema, defs: Record<string, JsonSchema>): string[] {
    return Object.entries(schema.properties ?? {}).map(([field, property]) => {
      const optional = schema.required?.includes(field) ? "" : "?";
      return `${doc(property.description)}${field}${optional}: ${this.type(property, defs)};`;
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
