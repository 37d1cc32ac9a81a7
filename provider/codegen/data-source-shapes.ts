/**
 * The data sources' argument and result shapes, read from their TypeScript declarations with the
 * compiler's checker: the interfaces and their doc comments are the one description of each function,
 * for TypeScript users and for the package schema alike.
 */
import * as ts from "typescript";
import type { JsonSchema } from "./json-schema";

export interface DataSourceShape {
  name: string;
  description: string;
  /** The doc comment's `@example`: lines of code that run inside an async function. */
  example?: string;
  /** The name of its `...Output` form (Inputs in, an Output out), when the entry exports one. */
  outputForm?: string;
  /** Absent for a function that takes no arguments (only options). */
  args?: JsonSchema;
  /** The TypeScript function may be called without its arguments. */
  argsOptional?: boolean;
  result: JsonSchema;
}

export interface DataSourceShapes {
  functions: DataSourceShape[];
  /** The named interfaces the shapes refer to (`$ref: "#/$defs/<name>"`). */
  defs: Record<string, JsonSchema>;
}

/** The option bag every data source takes last; it is configuration, not an argument. */
const OPTIONS_TYPE = "DataSourceOptions";

/** Reads the functions `names` exported by `entry` (a TypeScript file). */
export function dataSourceShapes(entry: string, names: readonly string[]): DataSourceShapes {
  const program = ts.createProgram([entry], {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    esModuleInterop: true,
    skipLibCheck: true,
    noEmit: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry);
  const module = source && checker.getSymbolAtLocation(source);
  if (!module) throw new Error(`cannot read ${entry}`);
  const exported = new Map(checker.getExportsOfModule(module).map((s) => [s.name, s]));
  const reader = new ShapeReader(checker);
  const functions = names.map((name) => {
    const symbol = exported.get(name);
    if (!symbol) throw new Error(`${entry} exports no ${name}`);
    const shape = reader.function(
      name,
      symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol,
    );
    const outputForm = `${name}Output`;
    return exported.has(outputForm) ? { ...shape, outputForm } : shape;
  });
  return { functions, defs: reader.defs };
}

class ShapeReader {
  readonly defs: Record<string, JsonSchema> = {};

  constructor(private readonly checker: ts.TypeChecker) {}

  function(name: string, symbol: ts.Symbol): DataSourceShape {
    const declaration = symbol.valueDeclaration;
    if (!declaration || !ts.isFunctionDeclaration(declaration)) throw new Error(`${name} is not a function`);
    const signature = this.checker.getSignatureFromDeclaration(declaration)!;
    const [first] = signature.getParameters();
    const argsType = first && this.checker.getNonNullableType(this.typeOf(first, declaration));
    const takesArgs = argsType !== undefined && argsType.getSymbol()?.name !== OPTIONS_TYPE;
    const argsOptional =
      takesArgs && this.checker.isOptionalParameter(first.valueDeclaration as ts.ParameterDeclaration);
    const resultType = this.checker.getAwaitedType(signature.getReturnType())!;
    const example = this.tag(symbol, "example");
    return {
      name,
      description: this.docs(symbol),
      ...(example ? { example } : {}),
      ...(takesArgs ? { args: this.object(argsType), argsOptional } : {}),
      result: this.object(resultType),
    };
  }

  private typeOf(symbol: ts.Symbol, at: ts.Node): ts.Type {
    return this.checker.getTypeOfSymbolAtLocation(symbol, at);
  }

  private docs(symbol: ts.Symbol): string {
    return ts.displayPartsToString(symbol.getDocumentationComment(this.checker)).trim();
  }

  /** The text of the doc comment's tag `@name`, or undefined without one. */
  private tag(symbol: ts.Symbol, name: string): string | undefined {
    const found = symbol.getJsDocTags(this.checker).find((t) => t.name === name);
    return found && ts.displayPartsToString(found.text).trim();
  }

  /** A property's `@defaultValue` (JSON: `false`, `"latest"`), as JSON Schema's default. */
  private defaultOf(property: ts.Symbol): JsonSchema {
    const text = this.tag(property, "defaultValue");
    return text === undefined ? {} : { default: JSON.parse(text) };
  }

  /** An object type's properties, inline (a function's arguments and result are not types of their own). */
  private object(type: ts.Type): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const property of this.checker.getPropertiesOfType(type)) {
      const at = property.valueDeclaration ?? property.declarations?.[0];
      if (!at) continue;
      const description = this.docs(property);
      properties[property.name] = {
        ...this.schema(this.typeOf(property, at)),
        ...(description ? { description } : {}),
        ...this.defaultOf(property),
      };
      if (!(property.flags & ts.SymbolFlags.Optional)) required.push(property.name);
    }
    return { type: "object", properties, required };
  }

  private schema(type: ts.Type): JsonSchema {
    if (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return {};
    if (type.isUnion()) return this.union(type.types);
    if (type.flags & ts.TypeFlags.StringLike) return { type: "string" };
    if (type.flags & ts.TypeFlags.NumberLike) return { type: "number" };
    if (type.flags & ts.TypeFlags.BooleanLike) return { type: "boolean" };
    if (this.checker.isArrayType(type)) {
      return {
        type: "array",
        items: this.schema(this.checker.getTypeArguments(type as ts.TypeReference)[0]),
      };
    }
    const [index] = this.checker.getIndexInfosOfType(type);
    if (index && this.checker.getPropertiesOfType(type).length === 0) {
      return { type: "object", additionalProperties: this.schema(index.type) };
    }
    const name = type.aliasSymbol?.name ?? type.getSymbol()?.name;
    if (!name || name.startsWith("__")) return this.object(type);
    if (!(name in this.defs)) {
      this.defs[name] = {};
      this.defs[name] = { ...this.object(type), ...this.describedAs(type) };
    }
    return { $ref: `#/$defs/${name}` };
  }

  private describedAs(type: ts.Type): JsonSchema {
    const symbol = type.aliasSymbol ?? type.getSymbol();
    const description = symbol ? this.docs(symbol) : "";
    return description ? { description } : {};
  }

  /** undefined is absence (optional), null is nullable; literal unions collapse to their base type. */
  private union(members: ts.Type[]): JsonSchema {
    const present = members.filter((t) => !(t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)));
    const nullable = present.some((t) => t.flags & ts.TypeFlags.Null);
    const options: JsonSchema[] = [];
    for (const member of present.filter((t) => !(t.flags & ts.TypeFlags.Null))) {
      const schema = this.schema(member);
      if (!options.some((o) => JSON.stringify(o) === JSON.stringify(schema))) options.push(schema);
    }
    const base = options.length === 1 ? options[0] : { anyOf: options };
    return nullable ? { anyOf: [base, { type: "null" }] } : base;
  }
}
