export { ConfigurationError } from "../settings";
export type { DataSourceOptions, InputArgs } from "./options";
export { clearCatalogueCache } from "./catalogue-cache";
export { LookupError, NoMatchError, AmbiguousMatchError } from "./errors";
export { CURRENCY, estimateHourlyPrice, estimateHourlyPriceOutput } from "./pricing";
export type { Currency, Price, HourlyPriced, EstimateHourlyPriceArgs, PriceEstimate } from "./pricing";
export { getGpus, getGpusOutput, getGpu, getGpuOutput } from "./gpus";
export type { GpuModel, GetGpusArgs, GetGpusResult, GetGpuArgs } from "./gpus";
export { getPods, getPodsOutput, getPod, getPodOutput } from "./pods";
export type { Pod, SelectedPod, GetPodsArgs, GetPodsResult, GetPodArgs } from "./pods";
export { getMarketImages, getMarketImagesOutput, getPersonalImages, getPersonalImagesOutput } from "./images";
export type {
  ImageComponents,
  MarketImage,
  GetMarketImagesArgs,
  GetMarketImagesResult,
  PersonalImageSummary,
  GetPersonalImagesResult,
} from "./images";
export { getInstances, getInstancesOutput } from "./instances";
export type { InstanceService, InstanceSummary, GetInstancesResult } from "./instances";
export { getBalance, getBalanceOutput } from "./account";
export type { Balance } from "./account";
export { getWorkflow, getWorkflowOutput } from "./workflows";
export type {
  ParameterOption,
  WorkflowParameter,
  WorkflowOutput,
  Workflow,
  GetWorkflowArgs,
} from "./workflows";
