/**
 * The types of the package schema in words, for readers of any language ("list of ServiceOutput"), and
 * the object types a page refers to, each with its own table: the same types the schema declares, under
 * the same names.
 */
import type { ObjectTypeSpec, PackageSchema, PropertySpec } from "../package-schema";
import { anchor, table } from "./markdown";

const TYPE_REF = "#/types/";

/** The type's name without the package: `gpucloud:index:ServiceOutput` is `ServiceOutput`. */
function typeName(token: string): string {
  return token.slice(token.lastIndexOf(":") + 1);
}

/** The type of a property in words; object types link to their section of the page. */
export function typeWords(spec: PropertySpec): string {
  if (spec.$ref === "pulumi.json#/Any") return "any";
  if (spec.$ref) {
    const name = typeName(spec.$ref.slice(TYPE_REF.length));
    return `[${name}](#${anchor(name)})`;
  }
  if (spec.oneOf) return spec.oneOf.map(typeWords).join(" or ");
  if (spec.type === "array") return `list of ${typeWords(spec.items ?? {})}`;
  if (spec.type === "object") return `map of string to ${typeWords(spec.additionalProperties ?? {})}`;
  return spec.type ?? "any";
}

/** An output or result property's type: one that is not always set says so. */
export function resultTypeWords(spec: PropertySpec, required: readonly string[] | undefined, name: string) {
  return required?.includes(name) ? typeWords(spec) : `${typeWords(spec)} (optional)`;
}

/** The object types these properties refer to, and those they refer to in turn, in the order met. */
function referencedTypes(schema: PackageSchema, properties: readonly PropertySpec[]): string[] {
  const found: string[] = [];
  const visit = (spec: PropertySpec | undefined): void => {
    if (!spec) return;
    if (spec.$ref?.startsWith(TYPE_REF)) {
      const token = spec.$ref.slice(TYPE_REF.length);
      if (found.includes(token)) return;
      found.push(token);
      Object.values(objectType(schema, token).properties).forEach(visit);
    }
    visit(spec.items);
    visit(spec.additionalProperties);
    spec.oneOf?.forEach(visit);
  };
  properties.forEach(visit);
  return found;
}

function objectType(schema: PackageSchema, token: string): ObjectTypeSpec {
  const type = schema.types[token];
  if (!type) throw new Error(`the schema declares no type ${token}`);
  return type;
}

/** A property's description; a property without one fails the build, which names where to add it. */
export function described(property: PropertySpec, where: string): string {
  if (!property.description) {
    throw new Error(`${where} has no description: describe it where it is declared, for its reference page.`);
  }
  return property.description;
}

/** The "Types" part of a page: the object types these properties use, or nothing when they use none. */
export function typeSectionsOf(schema: PackageSchema, properties: readonly PropertySpec[]): string[] {
  const tokens = referencedTypes(schema, properties);
  return tokens.length === 0 ? [] : ["## Types", ...typeSections(schema, tokens)];
}

/** One section per object type: its description and a table of its fields. */
function typeSections(schema: PackageSchema, tokens: readonly string[]): string[] {
  return tokens.flatMap((token) => {
    const type = objectType(schema, token);
    const rows = Object.entries(type.properties).map(([name, spec]) => [
      `\`${name}\``,
      resultTypeWords(spec, type.required, name),
      described(spec, `${typeName(token)}.${name}`),
    ]);
    return [`### ${typeName(token)}`, type.description, table(["Field", "Type", "Description"], rows)].filter(
      (block): block is string => block !== undefined,
    );
  });
}
