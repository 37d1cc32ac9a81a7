/**
 * A resource's reference page, from its definition and the schema made of it: what it is, its id, each
 * input with its type, default, rule and what a change does, the rules across inputs, each output, the
 * types they use, an example program and the `pulumi import` line.
 */
import { checksOf, diffRules, type AnyResourceDefinition } from "../../framework/define-resource";
import type { JsonSchema, ResourceSchemas } from "../json-schema";
import { type PackageSchema, type PropertySpec, type ResourceSpec } from "../package-schema";
import { token } from "../../tokens";
import { ruleWords } from "./input-rules";
import { bullets, codeBlock, page, table } from "./markdown";
import { EXAMPLE_SETTING, programExample } from "./program-example";
import { described, resultTypeWords, typeSectionsOf, typeWords } from "./property-types";

export interface ResourceSources {
  definition: AnyResourceDefinition;
  schemas: ResourceSchemas;
}

export function resourcePage(schema: PackageSchema, { definition, schemas }: ResourceSources): string {
  const spec = schema.resources[token(definition.name)];
  const outputs = Object.keys(definition.outputs).map((name): [string, PropertySpec] => [
    name,
    spec.properties[name],
  ]);
  return page([
    `# ${definition.name}`,
    definition.description,
    bullets([
      `**Id:** ${definition.id}.`,
      `**Type token:** \`${token(definition.name)}\` (the native plugin, Pulumi YAML and other languages).`,
      `**TypeScript** (\`pulumi-gpucloud\`): \`new gpucloud.${definition.name}(name, args, opts?)\`.`,
    ]),
    "## Example",
    EXAMPLE_SETTING,
    programExample(definition.example),
    "## Inputs",
    inputTable(definition, schemas, spec),
    inputDescriptions(definition.name, spec),
    ...rulesSection(checksOf(definition)),
    "## Outputs",
    ...outputSection(definition, spec, outputs),
    ...typeSectionsOf(schema, [...Object.values(spec.inputProperties), ...outputs.map(([, p]) => p)]),
    "## Import",
    importSection(definition),
  ]);
}

function inputTable(definition: AnyResourceDefinition, schemas: ResourceSchemas, spec: ResourceSpec): string {
  return inputsTable(spec, schemas.inputs, (name) => changeWords(definition, name));
}

/** Each input's type, whether it is required, its default, its rule, and what a change of it does. */
export function inputsTable(
  spec: ResourceSpec,
  inputs: JsonSchema,
  change: (name: string) => string,
): string {
  const rows = Object.entries(spec.inputProperties).map(([name, property]) => [
    `\`${name}\``,
    typeWords(property),
    spec.requiredInputs?.includes(name) ? "yes" : "no",
    property.default === undefined ? "" : `\`${JSON.stringify(property.default)}\``,
    ruleWords(inputs.properties?.[name] ?? {}),
    change(name),
  ]);
  return table(["Input", "Type", "Required", "Default", "Rule", "A change"], rows);
}

export function inputDescriptions(resource: string, spec: ResourceSpec): string {
  return bullets(
    Object.entries(spec.inputProperties).map(
      ([name, property]) => `\`${name}\`: ${described(property, `${resource}.${name}`)}`,
    ),
  );
}

/** What changing an input does, as the definition's diff rules decide it. */
function changeWords(definition: AnyResourceDefinition, name: string): string {
  const diff = diffRules(definition);
  const replaces = !definition.update || diff.replaceOnChanges.includes(name);
  const unchanged = [
    ...(diff.keepWhenUnset?.includes(name) || diff.adoptsById === name ? ["unset"] : []),
    ...(diff.adoptsById === name ? ["set to the resource's own id"] : []),
    ...(diff.sameAsOutput?.[name] ? [`set to the value of \`${diff.sameAsOutput[name]}\``] : []),
    ...(diff.choicesOf?.inputs.includes(name)
      ? [
          `${diff.choicesOf.inputs.map((input) => `\`${input}\``).join(" and ")} still hold \`${diff.choicesOf.output}\``,
        ]
      : []),
  ];
  const effect = replaces ? "replaces" : "updates in place";
  return unchanged.length > 0 ? `${effect} (nothing when ${unchanged.join(" or ")})` : effect;
}

export function rulesSection(rules: readonly { rule: string }[]): string[] {
  if (rules.length === 0) return [];
  return ["### Rules across inputs", bullets(rules.map((rule) => `${rule.rule}.`))];
}

function outputSection(
  definition: AnyResourceDefinition,
  spec: ResourceSpec,
  outputs: [string, PropertySpec][],
): string[] {
  if (outputs.length === 0) return ["Its inputs, and nothing else: every input is an output too."];
  return [
    "Every input is an output too. Besides them:",
    table(
      ["Output", "Type", "Description"],
      outputs.map(([name, property]) => [
        `\`${name}\``,
        resultTypeWords(property, spec.required, name),
        outputDescription(definition, name, property),
      ]),
    ),
  ];
}

function outputDescription(definition: AnyResourceDefinition, name: string, property: PropertySpec): string {
  const text = described(property, `${definition.name}.${name}`);
  return property.secret ? `${text} Secret: Pulumi stores it encrypted.` : text;
}

function importSection(definition: AnyResourceDefinition): string {
  const adopt = diffRules(definition).adoptsById;
  return [
    "With the native plugin (Pulumi YAML and other languages), `pulumi import` brings an existing one under a stack by its id:",
    "",
    codeBlock("sh", `pulumi import ${token(definition.name)} <name> <id>`),
    "",
    adopt
      ? `TypeScript programs on the dynamic providers cannot import: set \`${adopt}\` to its id instead, and the resource adopts it.`
      : "TypeScript programs on the dynamic providers cannot import: declare it instead, and creating it sets it as declared.",
  ].join("\n");
}
