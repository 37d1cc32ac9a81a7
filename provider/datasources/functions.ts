/**
 * Every data source's definition, in the order the package schema lists them: the generated public
 * functions (provider/generated/data-sources.ts), the package schema and the native plugin's Invoke
 * all read this one list.
 */
import { checkedArgs, type AnyDataSourceDefinition } from "../framework/define-data-source";
import { getBalanceSource } from "./account";
import type { DataSourceOptions } from "./options";
import { getGpuSource, getGpusSource } from "./gpus";
import { getMarketImagesSource, getPersonalImagesSource } from "./images";
import { getInstancesSource } from "./instances";
import { getPodSource, getPodsSource } from "./pods";
import { getWorkflowSource } from "./workflows";

export const DATA_SOURCES: readonly AnyDataSourceDefinition[] = [
  getGpusSource,
  getGpuSource,
  getPodsSource,
  getPodSource,
  getMarketImagesSource,
  getPersonalImagesSource,
  getInstancesSource,
  getBalanceSource,
  getWorkflowSource,
];

export type DataSourceCall = (args: object, opts?: DataSourceOptions) => Promise<unknown>;

/** One data source called by name: its arguments checked against its definition first, then its read. */
async function called(
  definition: AnyDataSourceDefinition,
  args: object,
  opts?: DataSourceOptions,
): Promise<unknown> {
  return definition.read(checkedArgs(definition, args), opts);
}

/** The data sources by name, each as a function of (arguments, options): what a native plugin's Invoke calls. */
export const dataSources: Readonly<Record<string, DataSourceCall>> = Object.fromEntries(
  DATA_SOURCES.map((definition) => [definition.name, (args, opts) => called(definition, args, opts)]),
);
