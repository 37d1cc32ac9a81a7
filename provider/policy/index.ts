/**
 * `pulumi-gpucloud/policy`: the cost guard, a CrossGuard policy pack for GPU fleets, as plain policy
 * objects (each unit-testable, each usable in a pack of your own) and the pack's arguments. The package
 * ships the pack ready to run in its `policy-pack` folder:
 *
 *   pulumi preview --policy-pack node_modules/pulumi-gpucloud/policy-pack
 *
 * Needs `@pulumi/policy` (an optional peer dependency: install it beside `@pulumi/pulumi`).
 */
import type { PolicyPackArgs } from "@pulumi/policy";
import { instanceHourlyPrice, stackHourlyBudget } from "./budget";
import { instanceGpus, stackGpus } from "./gpus";
import { idleShutdown, noDestroyOnIdle } from "./idle";
import { uniqueTitles } from "./titles";

export {
  instanceHourlyPrice,
  stackHourlyBudget,
  INSTANCE_PRICE_DEFAULTS,
  STACK_BUDGET_DEFAULTS,
  type InstancePriceConfig,
  type StackBudgetConfig,
} from "./budget";
export {
  instanceGpus,
  stackGpus,
  INSTANCE_GPUS_DEFAULTS,
  STACK_GPUS_DEFAULTS,
  type InstanceGpusConfig,
  type StackGpusConfig,
} from "./gpus";
export { idleShutdown, noDestroyOnIdle } from "./idle";
export { uniqueTitles } from "./titles";
export { kindOf, type ResourceKind } from "./kinds";

/** The pack's name, as `pulumi preview` reports it. */
export const COST_GUARD = "gpucloud-cost-guard";

/** Every policy of the cost guard, in the order reports list them. */
export const costGuardPolicies = [
  stackHourlyBudget,
  instanceHourlyPrice,
  instanceGpus,
  stackGpus,
  idleShutdown,
  noDestroyOnIdle,
  uniqueTitles,
];

/** The cost guard's arguments: `new PolicyPack(COST_GUARD, costGuardPack)`. */
export const costGuardPack: PolicyPackArgs = {
  description:
    "Stops an over-budget or idle-forever GPU fleet at preview, and in an update the instance (or the whole Fleet) " +
    "that would cross the budget before it is made: hourly budget, price and GPU caps, idle shutdown, unique titles.",
  displayName: "GPU cloud cost guard",
  policies: costGuardPolicies,
};
