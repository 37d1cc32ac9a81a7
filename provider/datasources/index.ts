export { ConfigurationError } from "../settings";
export type { DataSourceOptions, InputArgs } from "./options";
export { clearCatalogueCache } from "./catalogue-cache";
export { LookupError, NoMatchError, AmbiguousMatchError } from "./errors";
export { CURRENCY, estimateHourlyPrice, estimateHourlyPriceOutput } from "./pricing";
export type { Currency, HourlyPriced, EstimateHourlyPriceArgs, PriceEstimate } from "./pricing";
export * from "../generated/data-sources";
