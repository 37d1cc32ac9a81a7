/**
 * The money policies: the stack's hourly cost within a budget, and each instance's hourly price within a
 * cap. Both price instances from the cloud's catalogue (./prices.ts) at the most they may cost
 * (./billing.ts), a Fleet's members from the Fleet's inputs before any of them exists (./fleets.ts); a
 * catalogue that cannot be read or an instance that cannot be priced is a violation, never a pass.
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
import { costFromInputs, costFromOutputs, type Cost } from "./billing";
import { refusingUnknownConfig } from "./config";
import {
  fleetFacts,
  memberCosts,
  membersAt,
  priceLines,
  reportedForMembers,
  reportedWithFleet,
  sum,
  type FleetFacts,
} from "./fleets";
import { described, perHour, type InstancePrice } from "./prices";
import { instanceFacts, instancesOf, kindOf } from "./resources";
import { isPreview, runPart } from "./run";
import { RunningTotal } from "./running-total";

/** How many of the most expensive instances (or fleets) a budget violation names. */
const TOP = 5;

export interface StackBudgetConfig {
  /** The most the stack's instances may cost per hour, in CNY. */
  maxHourlyCost?: number;
}

export const STACK_BUDGET_DEFAULTS = { maxHourlyCost: 50 };

const FIX_BUDGET =
  "Run fewer or smaller instances, stop some that already exist (`running: false`), or raise maxHourlyCost " +
  "in the policy pack config.";

/**
 * The stack's hourly cost, each instance at the pod's hourly price plus the GPU's hourly price times
 * gpuNums (as `estimateHourlyPrice` and the fleet example's `hourlyPrice` output compute it), is at most
 * `maxHourlyCost`. One policy with one budget checks at both points where the engine asks: the whole
 * stack at the end of a preview (and after an update), and each instance before the update creates or
 * changes it, against the run's running total, so the instance that would cross the budget is never made.
 * (The policy SDK runs `validateResource` on each resource and `validateStack` on the stack for any policy
 * that has them.)
 */
export const stackHourlyBudget: ResourceValidationPolicy & StackValidationPolicy = refusingUnknownConfig({
  name: "gpucloud-stack-hourly-budget",
  description: `The stack's GPU instances cost at most maxHourlyCost ${CURRENCY} per hour.`,
  enforcementLevel: "mandatory",
  configSchema: {
    properties: {
      maxHourlyCost: {
        type: "number",
        minimum: 0,
        default: STACK_BUDGET_DEFAULTS.maxHourlyCost,
        description: `The most the stack's instances may cost per hour, in ${CURRENCY}.`,
      },
    },
  },
  validateResource: admitWithinBudget,
  validateStack: checkStackBudget,
});

const budgetOf = (config: StackBudgetConfig) =>
  new Decimal(config.maxHourlyCost ?? STACK_BUDGET_DEFAULTS.maxHourlyCost);

const RUNNING_TOTAL = Symbol("the budget's running total");
const runningTotal = () => runPart(RUNNING_TOTAL, () => new RunningTotal());

/**
 * In an update, before the engine creates or changes an instance: the run's running total with it stays
 * within the budget, or the instance is stopped here and nothing is made for it. A Fleet comes before its
 * members: it is let through with all of them, or stopped with none of them made. A preview is judged as
 * a whole by checkStackBudget instead.
 */
async function admitWithinBudget(args: ResourceValidationArgs, report: ReportViolation): Promise<void> {
  if (isPreview()) return;
  const kind = kindOf(args.type);
  if (kind !== "Instance" && kind !== "Fleet") return;
  const budget = budgetOf(args.getConfig<StackBudgetConfig>());
  if (kind === "Fleet") return admitFleet(fleetFacts(args), budget, report);
  const instance = instanceFacts(args);
  const cost = await orReported(
    costFromInputs(instance),
    report,
    `Could not check the hourly budget before "${args.name}"`,
  );
  if (!cost) return;
  if ("problem" in cost) {
    return report(`${cost.problem} The hourly budget cannot be checked, so the update stops before it.`);
  }
  if (!cost.counts) return runningTotal().release(instance);
  const admission = runningTotal().admit([cost.price], budget);
  if (admission.admitted) return;
  report(
    `"${args.name}" would take the stack's hourly cost to ${perHour(admission.total)}, over maxHourlyCost ` +
      `${perHour(budget)}, so the update stops before "${args.name}" is created or changed. Counted in this ` +
      `update before it: ${perHour(sum(admission.before))}${mostExpensive(admission.before)}\n` +
      `  "${args.name}": ${described(cost.price)}\n${FIX_BUDGET}`,
  );
}

/** A Fleet, before any of its members is registered: every member counted at once, or the Fleet stopped. */
async function admitFleet(fleet: FleetFacts, budget: Decimal, report: ReportViolation): Promise<void> {
  // Not shown the Fleet's inputs, the running total counts its members one by one as they come.
  if (typeof fleet.size !== "number") return;
  const costs = await orReported(
    memberCosts(fleet, fleet.size),
    report,
    `Could not check the hourly budget before fleet "${fleet.name}"`,
  );
  if (!costs) return;
  const priced = pricedMembers(costs);
  if ("problem" in priced) {
    return report(
      `Fleet "${fleet.name}": ${priced.problem} The hourly budget cannot be checked, so the update stops ` +
        "before any of its members is made.",
    );
  }
  const admission = runningTotal().admit(priced, budget);
  if (admission.admitted) return;
  report(
    `Fleet "${fleet.name}" would take the stack's hourly cost to ${perHour(admission.total)}, over maxHourlyCost ` +
      `${perHour(budget)}, so the update stops before any of its ${fleet.size} members is created or changed: ` +
      `${membersAt(priced)} = ${perHour(sum(priced))}. Counted in this update before it: ` +
      `${perHour(sum(admission.before))}${mostExpensive(admission.before)}\n${FIX_BUDGET}`,
  );
}

/** The prices of the members that count, or the first member's problem (they are all made alike). */
function pricedMembers(costs: readonly Cost[]): InstancePrice[] | { problem: string } {
  const problem = costs.find((cost) => "problem" in cost);
  if (problem) return problem;
  return costs.flatMap((cost) => ("counts" in cost && cost.counts ? [cost.price] : []));
}

/** The whole stack: at the end of a preview, each instance at the most it may cost; after an update, as made. */
async function checkStackBudget(args: StackValidationArgs, report: ReportViolation): Promise<void> {
  const budget = budgetOf(args.getConfig<StackBudgetConfig>());
  const instances = instancesOf(args.resources);
  if (instances.length === 0) return;
  const costs = await orReported(
    Promise.all(instances.map(costFromOutputs)),
    report,
    "Could not check the hourly budget",
  );
  if (!costs) return;
  const priced: InstancePrice[] = [];
  costs.forEach((cost, i) => {
    if ("problem" in cost) report(`${cost.problem} The hourly budget cannot be checked.`, instances[i].urn);
    else if (cost.counts) priced.push(cost.price);
  });
  const total = sum(priced);
  if (!total.greaterThan(budget)) return;
  const worst = priced.filter((p) => p.worstCase.length > 0).length;
  const upTo = worst > 0 ? "up to " : "";
  const how = worst > 0 ? `; ${worst} of them priced at the most they may cost (each says why)` : "";
  report(
    `The stack's ${priced.length} running instances would cost ${upTo}${perHour(total)}, over maxHourlyCost ` +
      `${perHour(budget)}${how}. The most expensive:${mostExpensive(priced)}\n${FIX_BUDGET}`,
  );
}

/** `\n  name: price (basis)` for the TOP dearest instances or fleets, and how many more. */
function mostExpensive(prices: readonly InstancePrice[]): string {
  const all = priceLines(prices);
  const top = all.sort((a, b) => b.amount.comparedTo(a.amount)).slice(0, TOP);
  const lines = top.map((line) => `\n  ${line.text}`);
  if (all.length > top.length) lines.push(`\n  ... and ${all.length - top.length} more`);
  return lines.join("");
}

/** What `pending` resolves to, or undefined once its failure (a cloud that cannot be read) is reported after `what`. */
async function orReported<T>(
  pending: Promise<T>,
  report: ReportViolation,
  what: string,
): Promise<T | undefined> {
  try {
    return await pending;
  } catch (err) {
    report(`${what}: ${messageOf(err)}`);
    return undefined;
  }
}

export interface InstancePriceConfig {
  /** The most one instance may cost per hour, in CNY. */
  maxInstanceHourlyPrice?: number;
}

export const INSTANCE_PRICE_DEFAULTS = { maxInstanceHourlyPrice: 20 };

const INSTANCE_PRICE = "gpucloud-instance-hourly-price";

/**
 * Each Instance that bills costs at most `maxInstanceHourlyPrice` per hour (the same prices as the budget);
 * a Fleet is judged by its members, before any of them is made, and its members are not judged again.
 */
export const instanceHourlyPrice: ResourceValidationPolicy = refusingUnknownConfig({
  name: INSTANCE_PRICE,
  description: `Each GPU instance costs at most maxInstanceHourlyPrice ${CURRENCY} per hour.`,
  enforcementLevel: "mandatory",
  configSchema: {
    properties: {
      maxInstanceHourlyPrice: {
        type: "number",
        minimum: 0,
        default: INSTANCE_PRICE_DEFAULTS.maxInstanceHourlyPrice,
        description: `The most one instance may cost per hour, in ${CURRENCY}.`,
      },
    },
  },
  validateResource: checkInstancePrice,
});

async function checkInstancePrice(args: ResourceValidationArgs, report: ReportViolation): Promise<void> {
  const kind = kindOf(args.type);
  const config = args.getConfig<InstancePriceConfig>();
  const cap = new Decimal(config.maxInstanceHourlyPrice ?? INSTANCE_PRICE_DEFAULTS.maxInstanceHourlyPrice);
  if (kind === "Fleet") return checkMemberPrices(fleetFacts(args), cap, report);
  if (kind !== "Instance") return;
  const instance = instanceFacts(args);
  if (reportedWithFleet(INSTANCE_PRICE, instance)) return;
  const cost = await orReported(
    costFromInputs(instance),
    report,
    `Could not check the price of "${args.name}"`,
  );
  if (!cost) return;
  if ("problem" in cost) return report(cost.problem);
  if (!cost.counts || !cost.price.amount.greaterThan(cap)) return;
  const upTo = cost.price.worstCase.length > 0 ? "up to " : "";
  report(
    `"${args.name}" would cost ${upTo}${described(cost.price)}, over maxInstanceHourlyPrice ${perHour(cap)}. ` +
      "Choose a cheaper GPU model or fewer GPUs, or raise maxInstanceHourlyPrice in the policy pack config.",
  );
}

/** A Fleet's members, each at the most it may cost, against the cap: one violation for the fleet. */
async function checkMemberPrices(fleet: FleetFacts, cap: Decimal, report: ReportViolation): Promise<void> {
  // Not shown the Fleet's inputs, its members are judged one by one as they come.
  if (typeof fleet.size !== "number") return;
  const costs = await orReported(
    memberCosts(fleet, fleet.size),
    report,
    `Could not check the price of fleet "${fleet.name}"'s members`,
  );
  if (!costs) return;
  const priced = pricedMembers(costs);
  if ("problem" in priced) {
    reportedForMembers(INSTANCE_PRICE, fleet.urn);
    return report(`Fleet "${fleet.name}": ${priced.problem}`);
  }
  const over = priced.filter((p) => p.amount.greaterThan(cap));
  if (over.length === 0) return;
  reportedForMembers(INSTANCE_PRICE, fleet.urn);
  report(
    `Fleet "${fleet.name}" (${fleet.size} members) would have members over maxInstanceHourlyPrice ` +
      `${perHour(cap)}: ${membersAt(over)}. Choose a cheaper GPU model or fewer GPUs, or raise ` +
      "maxInstanceHourlyPrice in the policy pack config.",
  );
}
