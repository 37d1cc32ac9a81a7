/**
 * The money policies: the stack's hourly cost within a budget, and each instance's hourly price within a
 * cap. Both price instances from the cloud's catalogue (./prices.ts); a catalogue that cannot be read or
 * an instance that cannot be priced is a violation, never a pass.
 */
import type {
  ReportViolation,
  ResourceValidationArgs,
  ResourceValidationPolicy,
  StackValidationArgs,
  StackValidationPolicy,
} from "@pulumi/policy";
import Decimal from "decimal.js";
import { CURRENCY } from "../datasources/pricing";
import { messageOf } from "../framework/errors";
import { priceList, priceOf, perHour, type InstancePrice, type PriceSource } from "./prices";
import { instanceFacts, instancesOf, kindOf, undecided, Unknown } from "./resources";

/** How many of the most expensive instances a budget violation names. */
const TOP = 5;

const BASE_URL_SCHEMA = {
  type: "string",
  description:
    "The cloud's base URL to read prices from; default: the stack's gpucloud:baseUrl, else GPUCLOUD_BASE_URL.",
} as const;

export interface StackBudgetConfig extends PriceSource {
  /** The most the stack's running instances may cost per hour, in CNY. */
  maxHourlyCost?: number;
}

export const STACK_BUDGET_DEFAULTS = { maxHourlyCost: 50 };

/**
 * The hourly cost of every Instance the stack would run, each the pod's hourly price plus the GPU's hourly
 * price times gpuNums (as `estimateHourlyPrice` and the fleet example's `hourlyPrice` output compute it),
 * is at most `maxHourlyCost`. Instances declared `running: false` count nothing.
 */
export const stackHourlyBudget: StackValidationPolicy = {
  name: "gpucloud-stack-hourly-budget",
  description: `The stack's running GPU instances cost at most maxHourlyCost ${CURRENCY} per hour.`,
  enforcementLevel: "mandatory",
  configSchema: {
    properties: {
      maxHourlyCost: {
        type: "number",
        minimum: 0,
        default: STACK_BUDGET_DEFAULTS.maxHourlyCost,
        description: `The most the stack's running instances may cost per hour, in ${CURRENCY}.`,
      },
      baseUrl: BASE_URL_SCHEMA,
    },
  },
  validateStack: checkStackBudget,
};

async function checkStackBudget(args: StackValidationArgs, report: ReportViolation): Promise<void> {
  const config = args.getConfig<StackBudgetConfig>();
  const budget = new Decimal(config.maxHourlyCost ?? STACK_BUDGET_DEFAULTS.maxHourlyCost);
  const running = instancesOf(args.resources).filter((i) => i.running !== false);
  if (running.length === 0) return;
  const list = await priceList(config).catch((err: unknown) => {
    report(`Could not check the hourly budget: ${messageOf(err)}`);
  });
  if (!list) return;
  const priced: InstancePrice[] = [];
  const unknowns: Unknown[] = [];
  for (const instance of running) {
    const price = priceOf(instance, list);
    if (price instanceof Unknown) unknowns.push(price);
    else if (instance.running instanceof Unknown) unknowns.push(instance.running);
    else if ("problem" in price)
      report(`${price.problem} The hourly budget cannot be checked.`, instance.urn);
    else priced.push(price);
  }
  const total = priced.reduce((sum, p) => sum.plus(p.amount), new Decimal(0));
  // Instances not known until up only add to what the known ones cost: over budget already is over budget.
  if (total.greaterThan(budget)) report(overBudget(total, budget, priced, unknowns.length));
  else if (unknowns.length > 0) undecided(unknowns[0]);
}

function overBudget(total: Decimal, budget: Decimal, priced: InstancePrice[], unpriced: number): string {
  const top = [...priced].sort((a, b) => b.amount.comparedTo(a.amount)).slice(0, TOP);
  const more = priced.length - top.length;
  const lines = top.map((p) => `  ${p.name}: ${perHour(p.amount)} (${p.basis})`);
  if (more > 0) lines.push(`  ... and ${more} more`);
  const atLeast = unpriced > 0 ? `at least ` : "";
  const notYet = unpriced > 0 ? ` (${unpriced} more whose price is not known until up would add to it)` : "";
  return (
    `The stack's ${priced.length} running instances would cost ${atLeast}${perHour(total)}${notYet}, ` +
    `over maxHourlyCost ${perHour(budget)}. The most expensive:\n${lines.join("\n")}\n` +
    "Run fewer or smaller instances, declare some `running: false`, or raise maxHourlyCost in the policy pack config."
  );
}

export interface InstancePriceConfig extends PriceSource {
  /** The most one running instance may cost per hour, in CNY. */
  maxInstanceHourlyPrice?: number;
}

export const INSTANCE_PRICE_DEFAULTS = { maxInstanceHourlyPrice: 20 };

/** Each running Instance costs at most `maxInstanceHourlyPrice` per hour (the same formula as the budget). */
export const instanceHourlyPrice: ResourceValidationPolicy = {
  name: "gpucloud-instance-hourly-price",
  description: `Each running GPU instance costs at most maxInstanceHourlyPrice ${CURRENCY} per hour.`,
  enforcementLevel: "mandatory",
  configSchema: {
    properties: {
      maxInstanceHourlyPrice: {
        type: "number",
        minimum: 0,
        default: INSTANCE_PRICE_DEFAULTS.maxInstanceHourlyPrice,
        description: `The most one running instance may cost per hour, in ${CURRENCY}.`,
      },
      baseUrl: BASE_URL_SCHEMA,
    },
  },
  validateResource: checkInstancePrice,
};

async function checkInstancePrice(args: ResourceValidationArgs, report: ReportViolation): Promise<void> {
  if (kindOf(args.type) !== "Instance") return;
  const config = args.getConfig<InstancePriceConfig>();
  const cap = new Decimal(config.maxInstanceHourlyPrice ?? INSTANCE_PRICE_DEFAULTS.maxInstanceHourlyPrice);
  const instance = instanceFacts(args);
  if (instance.running === false) return;
  const list = await priceList(config).catch((err: unknown) => {
    report(`Could not check the price of "${instance.name}": ${messageOf(err)}`);
  });
  if (!list) return;
  const price = priceOf(instance, list);
  if (price instanceof Unknown) return undecided(price);
  if ("problem" in price) return report(price.problem);
  if (!price.amount.greaterThan(cap)) return;
  if (instance.running instanceof Unknown) return undecided(instance.running);
  report(
    `"${instance.name}" would cost ${perHour(price.amount)} (${price.basis}), over maxInstanceHourlyPrice ` +
      `${perHour(cap)}. Choose a cheaper GPU model or fewer GPUs, or raise maxInstanceHourlyPrice in the policy pack config.`,
  );
}
