/**
 * A component resource's reference page, from its definition and the schema made of it: what it is and
 * what it is made of, each input with its type, default, rule and what a change does, the rules across
 * inputs, each output and an example program. A component has no id and is not imported: its children are.
 */
import { componentChecks, type AnyComponentDefinition } from "../../framework/define-component";
import type { ComponentSchemas } from "../json-schema";
import { type PackageSchema } from "../package-schema";
import { token } from "../../tokens";
import { bullets, page, table } from "./markdown";
import { EXAMPLE_SETTING, programExample } from "./program-example";
import { described, resultTypeWords, typeSectionsOf } from "./property-types";
import { inputDescriptions, inputsTable, rulesSection } from "./resource-page";

export function componentPage(
  schema: PackageSchema,
  definition: AnyComponentDefinition,
  schemas: ComponentSchemas,
): string {
  const spec = schema.resources[token(definition.name)];
  const changes = definition.changes as Record<string, string>;
  const outputs = Object.entries(spec.properties).map(([name, property]) => [
    `\`${name}\``,
    resultTypeWords(property, spec.required, name),
    described(property, `${definition.name}.${name}`),
  ]);
  return page([
    `# ${definition.name}`,
    definition.description,
    bullets([
      `**Type token:** \`${token(definition.name)}\`, a component resource (\`isComponent\` in the schema): ` +
        "the native plugin's Construct makes it for Pulumi YAML and other languages.",
      `**TypeScript** (\`pulumi-gpucloud\`): \`new gpucloud.${definition.name}(name, args, opts?)\`, made in the program.`,
    ]),
    "## Example",
    EXAMPLE_SETTING,
    programExample(definition.example),
    "## Inputs",
    inputsTable(spec, schemas.inputs, (name) => changes[name]),
    inputDescriptions(definition.name, spec),
    ...rulesSection(componentChecks(definition)),
    "## Outputs",
    "Its outputs are these alone: a component keeps no inputs of its own.",
    table(["Output", "Type", "Description"], outputs),
    ...typeSectionsOf(schema, [...Object.values(spec.inputProperties), ...Object.values(spec.properties)]),
    "## Import",
    "A component is not imported: import its members and their policies one by one, or declare it and let it make them.",
  ]);
}
