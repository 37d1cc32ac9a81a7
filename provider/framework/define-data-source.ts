/**
 * One declarative definition per data source, beside ./define-resource.ts: its arguments and result
 * (zod, each field described once), what it does, an example, and how it reads the cloud. The public
 * functions and their types (provider/generated/data-sources.ts), the package schema's function, its
 * reference page and the native plugin's Invoke are all derived from it (../codegen/).
 */
import type { z } from "zod";
import type { DataSourceOptions } from "../datasources/options";
import { issueText } from "./check";

export interface DataSourceDefinition<A extends z.ZodObject | undefined, R extends z.ZodObject> {
  /** The function's name in TypeScript, and its token's (`gpucloud:index:<name>`). */
  readonly name: string;
  readonly description: string;
  /** Lines of code that run inside an async function, for the reference page and the doc comment. */
  readonly example: string;
  /** Absent for a function that takes only options. */
  readonly args?: A;
  /** The result; a `.meta({ id })` on it names its public type (else `<Name>Result`). */
  readonly result: R;
  /** Reads the cloud; its arguments are already checked against `args`. */
  read(
    args: A extends z.ZodObject ? z.output<A> : Record<string, never>,
    opts?: DataSourceOptions,
  ): Promise<z.output<R>>;
}

// The definitions are read only through this view: the codegen and the callers need no argument types.
export type AnyDataSourceDefinition = DataSourceDefinition<z.ZodObject | undefined, z.ZodObject>;

export function defineDataSource<A extends z.ZodObject | undefined, R extends z.ZodObject>(
  definition: DataSourceDefinition<A, R>,
): AnyDataSourceDefinition {
  return definition as unknown as AnyDataSourceDefinition;
}

/** A definition whose arguments may all be left out may be called without them. */
export function argsOptional(definition: AnyDataSourceDefinition): boolean {
  if (!definition.args) return true;
  return Object.values(definition.args.shape).every(
    (field) => (field as z.ZodType).safeParse(undefined).success,
  );
}

/**
 * The arguments checked against the definition before any call: a wrong one fails naming the field and
 * the rule (`getGpu: name must be a string`). Arguments it does not declare are dropped.
 */
export function checkedArgs(definition: AnyDataSourceDefinition, args: unknown): Record<string, unknown> {
  if (!definition.args) return {};
  const parsed = definition.args.safeParse(args ?? {});
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => issueText(issue)).join("; ");
  throw new RangeError(`${definition.name}: ${problems}. Fix the argument and call it again.`);
}
