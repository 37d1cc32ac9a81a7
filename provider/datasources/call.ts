/**
 * What the generated public functions (provider/generated/data-sources.ts) call: a data source by name,
 * in its Promise form and its Output form. Its declarations name only the public option types, so a
 * program's type check never reaches the definitions (or zod).
 */
import type * as pulumi from "@pulumi/pulumi";
import { lift } from "./client";
import { dataSources } from "./functions";
import type { DataSourceOptions, InputArgs } from "./options";

/** The data source `name`, its arguments checked before any call. */
export function callDataSource(name: string, args: object, opts?: DataSourceOptions): Promise<unknown> {
  const call = dataSources[name];
  if (!call) throw new Error(`${name} is not a data source of this package.`);
  return call(args, opts);
}

/** The `...Output` form of the data source `name`: waits for every argument, then calls it. */
export function dataSourceOutput(
  name: string,
  args: InputArgs<object>,
  opts?: DataSourceOptions,
): pulumi.Output<unknown> {
  return lift((resolved: object) => callDataSource(name, resolved, opts), args, opts);
}
