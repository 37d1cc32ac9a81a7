/**
 * A checker of Pulumi YAML programs against a package schema, for the examples this package ships (the
 * Pulumi CLI, which would check them for real, cannot be installed on these machines). It reads what
 * such a program uses of a package: `resources` (type and properties), `variables` with `fn::invoke`
 * (function, arguments, return), `config` (declared types), and every `${name.path}` reference, and
 * reports each type, property, function, argument or result that does not exist or has the wrong type.
 * Builtins other than fn::invoke and fn::secret are reported as unsupported rather than guessed at.
 */
import type { ObjectTypeSpec, PackageSchema, PropertySpec } from "../../provider/codegen/package-schema";

type Primitive = "string" | "integer" | "number" | "boolean";

/** What a value or a property can hold. */
type Shape =
  | { kind: "any" }
  | { kind: "primitive"; type: Primitive }
  | { kind: "array"; items: Shape }
  | { kind: "map"; values: Shape }
  | { kind: "object"; name: string; properties: Record<string, PropertySpec>; required: string[] }
  | { kind: "union"; options: Shape[] };

const ANY: Shape = { kind: "any" };
const STRING: Shape = { kind: "primitive", type: "string" };

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Node = Record<string, Json>;

const TOP_LEVEL = [
  "name",
  "runtime",
  "description",
  "config",
  "variables",
  "resources",
  "outputs",
  "plugins",
  "packages",
];

function describe(shape: Shape): string {
  switch (shape.kind) {
    case "any":
      return "any";
    case "primitive":
      return shape.type;
    case "array":
      return `array of ${describe(shape.items)}`;
    case "map":
      return `map of ${describe(shape.values)}`;
    case "object":
      return shape.name;
    case "union":
      return shape.options.map(describe).join(" or ");
  }
}

function isNode(value: Json | undefined): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Splits `a.b[0]["c"]` into its accessors (a name, then names and subscripts). */
function accessors(path: string): (string | number)[] {
  const parts: (string | number)[] = [];
  const pattern = /\.?([^.[\]]+)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]/y;
  let match: RegExpExecArray | null;
  while (pattern.lastIndex < path.length && (match = pattern.exec(path))) {
    parts.push(match[1] ?? (match[2] !== undefined ? Number(match[2]) : match[3].replace(/\\"/g, '"')));
  }
  return parts;
}

/** `${...}` references in a string, and whether the string is exactly one of them. */
function references(text: string): { paths: string[]; whole: boolean } {
  const paths = [...text.matchAll(/\$\{([^}]+)\}/g)].map((m) => m[1]);
  return { paths, whole: paths.length === 1 && text === `\${${paths[0]}}` };
}

export class YamlProgramChecker {
  readonly errors: string[] = [];
  private readonly symbols = new Map<string, Shape>();

  constructor(
    private readonly schema: PackageSchema,
    private readonly program: Node,
  ) {}

  /** Every problem of the program, each naming where it is and what is wrong; empty when it is sound. */
  check(): string[] {
    for (const key of Object.keys(this.program)) {
      if (!TOP_LEVEL.includes(key)) this.errors.push(`${key}: not a section of a Pulumi YAML program`);
    }
    this.declareConfig();
    this.declareResources();
    this.declareVariables();
    this.checkResources();
    for (const [name, value] of Object.entries(this.section("outputs"))) {
      this.shapeOf(value, `outputs.${name}`);
    }
    return this.errors;
  }

  private section(name: string): Node {
    const value = this.program[name];
    return isNode(value) ? value : {};
  }

  private declareConfig(): void {
    for (const [name, declaration] of Object.entries(this.section("config"))) {
      const type = isNode(declaration) ? declaration.type : undefined;
      if (typeof type !== "string" || !["string", "integer", "number", "boolean"].includes(type)) {
        this.errors.push(`config.${name}: declare its type (string, integer, number or boolean)`);
        this.symbols.set(name, ANY);
        continue;
      }
      const shape: Shape = { kind: "primitive", type: type as Primitive };
      this.symbols.set(name, shape);
      if (isNode(declaration) && declaration.default !== undefined) {
        this.expect(declaration.default, shape, `config.${name}.default`);
      }
    }
  }

  private declareResources(): void {
    for (const [name, resource] of Object.entries(this.section("resources"))) {
      const type = isNode(resource) ? resource.type : undefined;
      const spec = typeof type === "string" ? this.schema.resources[type] : undefined;
      if (!spec) {
        this.errors.push(`resources.${name}.type: ${JSON.stringify(type)} is not a resource of the package`);
        this.symbols.set(name, ANY);
        continue;
      }
      // A component has a URN but no id.
      const ids: Record<string, PropertySpec> = spec.isComponent ? {} : { id: { type: "string" } };
      const properties = { ...ids, urn: { type: "string" }, ...spec.properties };
      this.symbols.set(name, { kind: "object", name: type as string, properties, required: [] });
    }
  }

  /** Each variable once, in any order (Pulumi YAML sorts them by use); a variable that uses itself is reported. */
  private declareVariables(): void {
    const variables = this.section("variables");
    const computing = new Set<string>();
    const declare = (name: string): Shape => {
      const known = this.symbols.get(name);
      if (known) return known;
      if (computing.has(name)) {
        this.errors.push(`variables.${name}: refers to itself`);
        return ANY;
      }
      computing.add(name);
      const shape = this.shapeOf(variables[name], `variables.${name}`);
      this.symbols.set(name, shape);
      return shape;
    };
    this.variable = (name) => (Object.hasOwn(variables, name) ? declare(name) : undefined);
    for (const name of Object.keys(variables)) declare(name);
  }

  /** The shape of the variable `name`, computed on first use; undefined when there is no such variable. */
  private variable: (name: string) => Shape | undefined = () => undefined;

  private checkResources(): void {
    for (const [name, resource] of Object.entries(this.section("resources"))) {
      if (!isNode(resource) || typeof resource.type !== "string") continue;
      const spec = this.schema.resources[resource.type];
      if (!spec) continue;
      const where = `resources.${name}.properties`;
      const properties = isNode(resource.properties) ? resource.properties : {};
      this.expectObject(properties, spec.inputProperties, spec.requiredInputs ?? [], where);
    }
  }

  /** An object's fields against declared properties: each known, of the right type, the required ones present. */
  private expectObject(
    value: Node,
    properties: Record<string, PropertySpec>,
    required: string[],
    where: string,
  ): void {
    for (const [key, field] of Object.entries(value)) {
      const property = properties[key];
      if (!property) {
        this.errors.push(`${where}.${key}: not a property (known: ${Object.keys(properties).join(", ")})`);
        continue;
      }
      this.expect(field, this.shapeOfSpec(property), `${where}.${key}`);
    }
    for (const key of required) {
      if (value[key] === undefined) this.errors.push(`${where}.${key}: required but not set`);
    }
  }

  /** Checks `value` where a `target` is expected. */
  private expect(value: Json, target: Shape, where: string): void {
    if (Array.isArray(value) && target.kind === "array") {
      value.forEach((item, i) => this.expect(item, target.items, `${where}[${i}]`));
      return;
    }
    if (isNode(value) && !this.builtin(value) && target.kind === "object") {
      this.expectObject(value, target.properties, target.required, where);
      return;
    }
    if (isNode(value) && !this.builtin(value) && target.kind === "map") {
      for (const [key, field] of Object.entries(value)) this.expect(field, target.values, `${where}.${key}`);
      return;
    }
    const shape = this.shapeOf(value, where);
    if (!this.assignable(shape, target)) {
      this.errors.push(`${where}: expected ${describe(target)}, got ${describe(shape)}`);
    }
  }

  private builtin(node: Node): string | undefined {
    const keys = Object.keys(node);
    return keys.length === 1 && keys[0].toLowerCase().startsWith("fn::") ? keys[0].toLowerCase() : undefined;
  }

  /** The shape of a value (a literal, a reference, an interpolation or a builtin), reporting what does not resolve. */
  private shapeOf(value: Json, where: string): Shape {
    if (value === null) return ANY;
    if (typeof value === "boolean") return { kind: "primitive", type: "boolean" };
    if (typeof value === "number")
      return { kind: "primitive", type: Number.isInteger(value) ? "integer" : "number" };
    if (typeof value === "string") {
      const { paths, whole } = references(value);
      const shapes = paths.map((path) => this.resolve(path, where));
      return whole ? shapes[0] : STRING;
    }
    if (Array.isArray(value)) {
      const items = value.map((item, i) => this.shapeOf(item, `${where}[${i}]`));
      return {
        kind: "array",
        items: items.length === 1 ? items[0] : items.length === 0 ? ANY : { kind: "union", options: items },
      };
    }
    const builtin = this.builtin(value);
    if (builtin === "fn::invoke") return this.invoke(value[Object.keys(value)[0]], `${where}.fn::invoke`);
    if (builtin === "fn::secret") return this.shapeOf(value[Object.keys(value)[0]], `${where}.fn::secret`);
    if (builtin) {
      this.errors.push(`${where}: ${builtin} is not supported by this checker`);
      return ANY;
    }
    const properties = Object.fromEntries(Object.keys(value).map((key) => [key, {}]));
    for (const [key, field] of Object.entries(value)) this.shapeOf(field, `${where}.${key}`);
    return { kind: "object", name: "object literal", properties, required: [] };
  }

  private invoke(call: Json, where: string): Shape {
    if (!isNode(call) || typeof call.function !== "string") {
      this.errors.push(`${where}: an invoke names its function`);
      return ANY;
    }
    const spec = this.schema.functions[call.function];
    if (!spec) {
      this.errors.push(`${where}.function: ${call.function} is not a function of the package`);
      return ANY;
    }
    const args = isNode(call.arguments) ? call.arguments : {};
    this.expectObject(args, spec.inputs?.properties ?? {}, spec.inputs?.required ?? [], `${where}.arguments`);
    const result: Shape = {
      kind: "object",
      name: `${call.function} result`,
      properties: spec.outputs.properties,
      required: [],
    };
    if (call.return === undefined) return result;
    if (typeof call.return !== "string" || !spec.outputs.properties[call.return]) {
      this.errors.push(`${where}.return: ${JSON.stringify(call.return)} is not a result of ${call.function}`);
      return ANY;
    }
    return this.shapeOfSpec(spec.outputs.properties[call.return]);
  }

  /** Follows `${name.path}` through the schema; a step that does not exist is reported. */
  private resolve(path: string, where: string): Shape {
    const [root, ...steps] = accessors(path);
    let shape = typeof root === "string" ? (this.symbols.get(root) ?? this.variable(root)) : undefined;
    if (!shape) {
      this.errors.push(
        `${where}: \${${path}} names ${String(root)}, which is no config, variable or resource`,
      );
      return ANY;
    }
    for (const step of steps) {
      const next = this.step(shape, step);
      if (!next) {
        this.errors.push(`${where}: \${${path}}: ${describe(shape)} has no ${JSON.stringify(step)}`);
        return ANY;
      }
      shape = next;
    }
    return shape;
  }

  private step(shape: Shape, step: string | number): Shape | undefined {
    if (shape.kind === "any") return ANY;
    if (shape.kind === "array" && typeof step === "number") return shape.items;
    if (shape.kind === "map" && typeof step === "string") return shape.values;
    if (shape.kind === "object" && typeof step === "string" && shape.properties[step]) {
      return this.shapeOfSpec(shape.properties[step]);
    }
    return undefined;
  }

  private shapeOfSpec(spec: PropertySpec): Shape {
    if (spec.$ref) {
      const prefix = "#/types/";
      const type: ObjectTypeSpec | undefined = spec.$ref.startsWith(prefix)
        ? this.schema.types[spec.$ref.slice(prefix.length)]
        : undefined;
      if (!type) return ANY;
      return {
        kind: "object",
        name: spec.$ref.slice(prefix.length),
        properties: type.properties,
        required: type.required ?? [],
      };
    }
    if (spec.oneOf) return { kind: "union", options: spec.oneOf.map((s) => this.shapeOfSpec(s)) };
    switch (spec.type) {
      case "string":
      case "integer":
      case "number":
      case "boolean":
        return { kind: "primitive", type: spec.type };
      case "array":
        return { kind: "array", items: spec.items ? this.shapeOfSpec(spec.items) : ANY };
      case "object":
        return {
          kind: "map",
          values: spec.additionalProperties ? this.shapeOfSpec(spec.additionalProperties) : ANY,
        };
      default:
        return ANY;
    }
  }

  private assignable(source: Shape, target: Shape): boolean {
    if (source.kind === "any" || target.kind === "any") return true;
    if (target.kind === "union") return target.options.some((option) => this.assignable(source, option));
    if (source.kind === "union") return source.options.every((option) => this.assignable(option, target));
    if (source.kind === "primitive" && target.kind === "primitive") {
      return source.type === target.type || (source.type === "integer" && target.type === "number");
    }
    if (source.kind === "array" && target.kind === "array")
      return this.assignable(source.items, target.items);
    if (source.kind === "map" && target.kind === "map") return this.assignable(source.values, target.values);
    if (source.kind === "object" && target.kind === "map") {
      return Object.values(source.properties).every((p) =>
        this.assignable(this.shapeOfSpec(p), target.values),
      );
    }
    if (source.kind === "object" && target.kind === "object") {
      return Object.keys(source.properties).every((key) => key in target.properties);
    }
    return false;
  }
}
