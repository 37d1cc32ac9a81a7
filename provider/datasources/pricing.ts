import type * as pulumi from "@pulumi/pulumi";
import Decimal from "decimal.js";
import { GPU_NUMS, terminalSafe } from "../../sdk";
import { lift } from "./client";
import type { Price } from "../generated/data-sources";
import type { InputArgs } from "./options";

// docs/design/live-service-notes.md#prices
/** The only currency the cloud prices in. */
export const CURRENCY = "CNY";
export type Currency = typeof CURRENCY;

export interface RawPrice {
  hour: number;
  day?: number | null;
  week?: number | null;
  month?: number | null;
  year?: number | null;
}

export function toPrice(raw: RawPrice): Price {
  const price: Price = { hour: raw.hour, currency: CURRENCY };
  for (const period of ["day", "week", "month", "year"] as const) {
    const value = raw[period];
    if (typeof value === "number") {
      price[period] = value;
    }
  }
  return price;
}

/** Anything with an hourly price: a `getPod` or `getGpu` result, or a literal. */
export interface HourlyPriced {
  /** Absent for a pod the catalogue lists without a price, which cannot be estimated. */
  hourlyPrice?: number;
  currency: string;
}

export interface EstimateHourlyPriceArgs {
  /** The pod the instance is created from (a `getPod` result). */
  pod: HourlyPriced & { title?: string };
  /** The GPU model (a `getGpu` result). */
  gpu: HourlyPriced & { gpuName?: string };
  /** Number of GPUs: 1, 2, 4 or 8. */
  gpuNums: number;
}

/** An estimated price, never a quote: the cloud's real bill may differ. */
export interface PriceEstimate {
  /** Estimated cost per hour. */
  amount: number;
  currency: Currency;
  /** Always true: this is computed here, not quoted by the cloud. */
  estimate: true;
  /** How the amount was computed, for display next to it. */
  basis: string;
}

/**
 * Estimates the hourly cost of an instance created from `pod` on `gpuNums` GPUs of model `gpu`:
 * pod hourly price + GPU hourly price × gpuNums. The formula is what public clients of the live service
 * believe, not a documented price rule, hence `estimate: true`.
 *
 * @example
 * const pod = await gpucloud.getPod({ title: "ComfyUI" });
 * const gpu = await gpucloud.getGpu({ name: "4090D" });
 * const cost = gpucloud.estimateHourlyPrice({ pod, gpu, gpuNums: 2 }); // { amount, currency: "CNY", estimate: true, basis }
 */
export function estimateHourlyPrice(args: EstimateHourlyPriceArgs): PriceEstimate {
  const { pod, gpu, gpuNums } = args;
  if (!(GPU_NUMS as readonly number[]).includes(gpuNums)) {
    throw new RangeError(
      `estimateHourlyPrice: gpuNums is ${gpuNums}; allowed values are ${GPU_NUMS.join(", ")}.`,
    );
  }
  const podHourly = hourlyPriceOf("pod", pod);
  const gpuHourly = hourlyPriceOf("gpu", gpu);
  // Decimal keeps 0.1 + 0.2 at 0.3: the amount is shown to people next to the catalogue prices.
  const amount = new Decimal(podHourly).plus(new Decimal(gpuHourly).times(gpuNums)).toNumber();
  // The basis is printed with the stack's outputs: the catalogue's names are shown escaped.
  const podLabel = pod.title !== undefined ? `pod "${terminalSafe(pod.title)}"` : "pod";
  const gpuLabel = gpu.gpuName !== undefined ? `GPU ${terminalSafe(gpu.gpuName)}` : "GPU";
  return {
    amount,
    currency: CURRENCY,
    estimate: true,
    basis:
      `${podLabel} ${podHourly} ${CURRENCY}/h + ${gpuLabel} ${gpuHourly} ${CURRENCY}/h × ${gpuNums}; ` +
      "the formula public clients of the live service use, unconfirmed by the cloud",
  };
}

function hourlyPriceOf(what: "pod" | "gpu", priced: HourlyPriced): number {
  const hourly = priced.hourlyPrice;
  if (hourly === undefined) {
    throw new RangeError(
      `estimateHourlyPrice: the ${what} has no hourly price (the catalogue lists none), so no estimate can be made.`,
    );
  }
  if (!Number.isFinite(hourly) || hourly < 0) {
    throw new RangeError(
      `estimateHourlyPrice: ${what}.hourlyPrice is ${hourly}; it must be a number of at least 0.`,
    );
  }
  if (priced.currency !== CURRENCY) {
    throw new RangeError(
      `estimateHourlyPrice: ${what}.currency is "${priced.currency}"; only ${CURRENCY} prices can be added.`,
    );
  }
  return hourly;
}

/** `estimateHourlyPrice` over Inputs, e.g. the `...Output` forms of `getPod` and `getGpu`. */
export function estimateHourlyPriceOutput(
  args: InputArgs<EstimateHourlyPriceArgs>,
): pulumi.Output<PriceEstimate> {
  return lift(estimateHourlyPrice, args);
}
