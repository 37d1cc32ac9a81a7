/**
 * A data source's reference page, from its TypeScript declaration (its doc comment, its argument and
 * result interfaces) and the function the schema makes of it: what it does, how it is called, each
 * argument, each field of its result, the types they use and an example program.
 */
import type { DataSourceShape } from "../data-source-shapes";
import { type FunctionSpec, type PackageSchema } from "../package-schema";
import { token } from "../../tokens";
import { bullets, page, table } from "./markdown";
import { EXAMPLE_SETTING, programExample } from "./program-example";
import { described, resultTypeWords, typeSectionsOf, typeWords } from "./property-types";

export function dataSourcePage(schema: PackageSchema, shape: DataSourceShape): string {
  const spec = schema.functions[token(shape.name)];
  if (!shape.example) {
    throw new Error(`${shape.name} has no @example in its doc comment, which its reference page shows.`);
  }
  const properties = [
    ...Object.values(spec.inputs?.properties ?? {}),
    ...Object.values(spec.outputs.properties),
  ];
  return page([
    `# ${shape.name}`,
    shape.description,
    bullets([
      `**Function token:** \`${token(shape.name)}\` (the native plugin: \`fn::invoke\` in Pulumi YAML, other languages).`,
      `**TypeScript** (\`pulumi-gpucloud\`): ${callForms(shape)}. Its \`opts\` (\`DataSourceOptions\`) override the connection for one call.`,
    ]),
    "## Example",
    EXAMPLE_SETTING,
    programExample(shape.example.split("\n")),
    "## Arguments",
    argumentTable(shape.name, spec),
    "## Result",
    table(
      ["Field", "Type", "Description"],
      Object.entries(spec.outputs.properties).map(([name, property]) => [
        `\`${name}\``,
        resultTypeWords(property, spec.outputs.required, name),
        described(property, `${shape.name}'s result ${name}`),
      ]),
    ),
    ...typeSectionsOf(schema, properties),
  ]);
}

/** The Promise form, and the Output form when there is one. */
function callForms(shape: DataSourceShape): string {
  const args = shape.args ? (shape.argsOptional ? "args?, " : "args, ") : "";
  const call = (name: string) => `\`gpucloud.${name}(${args}opts?)\``;
  const promise = `${call(shape.name)} returns a Promise`;
  if (!shape.outputForm) return promise;
  const inputs = shape.args ? ", whose arguments may be Outputs," : "";
  return `${promise}; ${call(shape.outputForm)}${inputs} returns an Output`;
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
