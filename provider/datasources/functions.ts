/**
 * The data sources by name, each as a function of (arguments, options): the functions of the package
 * schema (their shapes are read from the declarations these names export from ./index.ts), and what a
 * native plugin's Invoke calls.
 */
import { getBalance } from "./account";
import type { DataSourceOptions } from "./options";
import { getGpu, getGpus } from "./gpus";
import { getMarketImages, getPersonalImages } from "./images";
import { getInstances } from "./instances";
import { getPod, getPods } from "./pods";
import { getWorkflow } from "./workflows";

export const dataSources = {
  getGpus,
  getGpu,
  getPods,
  getPod,
  getMarketImages,
  getPersonalImages: (_args: object, opts?: DataSourceOptions) => getPersonalImages(opts),
  getInstances: (_args: object, opts?: DataSourceOptions) => getInstances(opts),
  getBalance: (_args: object, opts?: DataSourceOptions) => getBalance(opts),
  getWorkflow,
} satisfies Record<string, (args: never, opts?: DataSourceOptions) => Promise<unknown>>;
