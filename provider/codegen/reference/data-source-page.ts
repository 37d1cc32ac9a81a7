/**
 * A data source's reference page, from its definition (what it does, its example, its arguments and
 * result) and the function the schema makes of it: what it does, how it is called, each
 * argument, each field of its result, the types they use and an example program.
 */
import { argsOptional, type AnyDataSourceDefinition } from "../../framework/define-data-source";
import { type FunctionSpec, type PackageSchema } from "../package-schema";
import { token } from "../../tokens";
import { bullets, page, table } from "./markdown";
import { EXAMPLE_SETTING, programExample } from "./program-example";
import { described, resultTypeWords, typeSectionsOf, typeWords } from "./property-types";

export function dataSourcePage(schema: PackageSchema, definition: AnyDataSourceDefinition): string {
  const spec = schema.functions[token(definition.name)];
  const properties = [
    ...Object.values(spec.inputs?.properties ?? {}),
    ...Object.values(spec.outputs.properties),
  ];
  return page([
    `# ${definition.name}`,
    definition.description,
    bullets([
      `**Function token:** \`${token(definition.name)}\` (the native plugin: \`fn::invoke\` in Pulumi YAML, other languages).`,
      `**TypeScript** (\`pulumi-gpucloud\`): ${callForms(definition)}. Its \`opts\` (\`DataSourceOptions\`) override the connection for one call.`,
    ]),
    "## Example",
    EXAMPLE_SETTING,
    programExample(definition.example.split("\n")),
    "## Arguments",
    argumentTable(definition.name, spec),
    "## Result",
    table(
      ["Field", "Type", "Description"],
      Object.entries(spec.outputs.properties).map(([name, property]) => [
        `\`${name}\``,
        resultTypeWords(property, spec.outputs.required, name),
        described(property, `${definition.name}'s result ${name}`),
      ]),
    ),
    ...typeSectionsOf(schema, properties),
  ]);
}

/** The Promise form and the Output form. */
function callForms(definition: AnyDataSourceDefinition): string {
  const args = definition.args ? (argsOptional(definition) ? "args?, " : "args, ") : "";
  const call = (name: string) => `\`gpucloud.${name}(${args}opts?)\``;
  const inputs = definition.args ? ", whose arguments may be Outputs," : "";
  return `${call(definition.name)} returns a Promise; ${call(`${definition.name}Output`)}${inputs} returns an Output`;
}

function argumentTable(name: string, spec: FunctionSpec): string {
  const inputs = Object.entries(spec.inputs?.properties ?? {});
  if (inputs.length === 0) return "None: it takes only `opts`.";
  return table(
    ["Argument", "Type", "Required", "Default", "Description"],
    inputs.map(([argument, property]) => [
      `\`${argument}\``,
      typeWords(property),
      spec.inputs?.required?.includes(argument) ? "yes" : "no",
      property.default === undefined ? "" : `\`${JSON.stringify(property.default)}\``,
      described(property, `${name}'s argument ${argument}`),
    ]),
  );
}
