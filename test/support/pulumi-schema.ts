/**
 * Checks of a Pulumi package schema (the subset of pulumi.json this package uses): that it is well
 * formed, and that real values fit the types it declares.
 */
import type { PackageSchema, PropertySpec } from "../../provider/codegen/package-schema";

const PRIMITIVES = ["string", "integer", "number", "boolean"];
const TOKEN = /^[a-zA-Z][-a-zA-Z0-9_]*:([^0-9][a-zA-Z0-9._/-]*)?:[^0-9][a-zA-Z0-9._/-]*$/;

interface ObjectSpec {
  properties?: Record<string, PropertySpec>;
  required?: string[];
}

/** Every place that holds properties, named for messages. */
function objects(schema: PackageSchema): [string, ObjectSpec, "required" | "requiredInputs"][] {
  const places: [string, ObjectSpec, "required" | "requiredInputs"][] = [
    ["config", { properties: schema.config.variables }, "required"],
    ["provider", { properties: schema.provider.inputProperties }, "required"],
  ];
  for (const [token, r] of Object.entries(schema.resources)) {
    places.push([`${token} properties`, r, "required"]);
    places.push([
      `${token} inputs`,
      { properties: r.inputProperties, required: r.requiredInputs },
      "required",
    ]);
  }
  for (const [token, f] of Object.entries(schema.functions)) {
    if (f.inputs) places.push([`${token} inputs`, f.inputs, "required"]);
    places.push([`${token} outputs`, f.outputs, "required"]);
  }
  for (const [token, t] of Object.entries(schema.types)) places.push([token, t, "required"]);
  return places;
}

/** What is wrong with the schema's structure: tokens, references, required names, types. */
export function schemaProblems(schema: PackageSchema): string[] {
  const problems: string[] = [];
  for (const token of [
    ...Object.keys(schema.resources),
    ...Object.keys(schema.functions),
    ...Object.keys(schema.types),
  ]) {
    if (!TOKEN.test(token) || !token.startsWith(`${schema.name}:`))
      problems.push(`${token}: not a token of ${schema.name}`);
  }
  for (const [where, object] of objects(schema)) {
    for (const name of object.required ?? []) {
      if (!object.properties?.[name]) problems.push(`${where}: required ${name} is not a property`);
    }
    for (const [name, spec] of Object.entries(object.properties ?? {})) {
      problems.push(...typeProblems(schema, spec, `${where}.${name}`));
    }
  }
  for (const [token, type] of Object.entries(schema.types)) {
    if (type.type !== "object") problems.push(`${token}: type ${type.type} is not object`);
  }
  return problems;
}

function typeProblems(schema: PackageSchema, spec: PropertySpec, where: string): string[] {
  if (spec.$ref !== undefined) {
    if (spec.$ref === "pulumi.json#/Any") return [];
    const token = spec.$ref.replace(/^#\/types\//, "");
    return spec.$ref.startsWith("#/types/") && schema.types[token]
      ? []
      : [`${where}: $ref ${spec.$ref} resolves to nothing`];
  }
  if (spec.oneOf) {
    if (spec.oneOf.length < 2) return [`${where}: oneOf needs two types or more`];
    return spec.oneOf.flatMap((option, i) => typeProblems(schema, option, `${where}.oneOf[${i}]`));
  }
  if (spec.type === "array") {
    return spec.items ? typeProblems(schema, spec.items, `${where}[]`) : [`${where}: an array without items`];
  }
  if (spec.type === "object") {
    return spec.additionalProperties ? typeProblems(schema, spec.additionalProperties, `${where}{}`) : [];
  }
  if (spec.type === undefined || !PRIMITIVES.includes(spec.type))
    return [`${where}: type ${spec.type} is not a Pulumi type`];
  if (spec.default !== undefined && !fits(spec.type, spec.default))
    return [`${where}: default ${spec.default} is not a ${spec.type}`];
  return [];
}

function fits(type: string, value: unknown): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
    default:
      return false;
  }
}

/** How `value` breaks the object type `object`: a missing required property, an unknown one, a wrong type. */
export function valueProblems(
  schema: PackageSchema,
  object: ObjectSpec,
  value: unknown,
  where: string,
): string[] {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [`${where}: not an object`];
  const record = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const name of object.required ?? []) {
    if (record[name] === undefined || record[name] === null)
      problems.push(`${where}.${name}: required, absent`);
  }
  for (const [name, v] of Object.entries(record)) {
    const spec = object.properties?.[name];
    if (!spec) problems.push(`${where}.${name}: not in the schema`);
    else if (v !== null && v !== undefined)
      problems.push(...specProblems(schema, spec, v, `${where}.${name}`));
  }
  return problems;
}

function specProblems(schema: PackageSchema, spec: PropertySpec, value: unknown, where: string): string[] {
  if (spec.$ref === "pulumi.json#/Any") return [];
  if (spec.$ref)
    return valueProblems(schema, schema.types[spec.$ref.replace(/^#\/types\//, "")], value, where);
  if (spec.oneOf) {
    const fitting = spec.oneOf.some((option) => specProblems(schema, option, value, where).length === 0);
    return fitting ? [] : [`${where}: ${JSON.stringify(value)} fits none of its types`];
  }
  if (spec.type === "array") {
    if (!Array.isArray(value)) return [`${where}: not an array`];
    return value.flatMap((item, i) => specProblems(schema, spec.items!, item, `${where}[${i}]`));
  }
  if (spec.type === "object") {
    if (typeof value !== "object" || value === null) return [`${where}: not a map`];
    return Object.entries(value).flatMap(([k, v]) =>
      specProblems(schema, spec.additionalProperties!, v, `${where}.${k}`),
    );
  }
  return fits(spec.type!, value) ? [] : [`${where}: ${JSON.stringify(value)} is not a ${spec.type}`];
}
