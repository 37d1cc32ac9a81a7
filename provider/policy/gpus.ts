/**
 * GPU count caps: per instance and per stack. They need no prices, so they hold even where the catalogue
 * cannot be read, and they catch the `count` typo that would rent eighty cards. A Fleet's members are
 * instances like any other: the per-instance cap judges what they are made of on the Fleet, before any of
 * them is made, and the stack's count holds them with the rest.
 */
import type {
  ReportViolation,
  ResourceValidationArgs,
  ResourceValidationPolicy,
  StackValidationArgs,
  StackValidationPolicy,
} from "@pulumi/policy";
import { refusingUnknownConfig } from "./config";
import { fleetFacts, fleetGpus, reportedForMembers, reportedWithFleet } from "./fleets";
import {
  firstUnknown,
  instanceFacts,
  instancesOf,
  kindOf,
  undecided,
  Unknown,
  type InstanceFacts,
} from "./resources";

export interface InstanceGpusConfig {
  maxGpusPerInstance?: number;
}

export const INSTANCE_GPUS_DEFAULTS = { maxGpusPerInstance: 8 };

const INSTANCE_GPUS = "gpucloud-instance-gpus";

/** Each running Instance, a Fleet's members included, has at most `maxGpusPerInstance` GPUs. */
export const instanceGpus: ResourceValidationPolicy = refusingUnknownConfig({
  name: INSTANCE_GPUS,
  description: "Each running GPU instance has at most maxGpusPerInstance GPUs.",
  enforcementLevel: "mandatory",
  configSchema: {
    properties: {
      maxGpusPerInstance: {
        type: "integer",
        minimum: 1,
        default: INSTANCE_GPUS_DEFAULTS.maxGpusPerInstance,
        description: "The most GPUs one running instance may have.",
      },
    },
  },
  validateResource: checkInstanceGpus,
});

function checkInstanceGpus(args: ResourceValidationArgs, report: ReportViolation): void {
  const kind = kindOf(args.type);
  if (kind !== "Instance" && kind !== "Fleet") return;
  const cap =
    args.getConfig<InstanceGpusConfig>().maxGpusPerInstance ?? INSTANCE_GPUS_DEFAULTS.maxGpusPerInstance;
  const fleet = kind === "Fleet" ? fleetFacts(args) : undefined;
  const instance = fleet ? fleet.spec : instanceFacts(args);
  // A Fleet not shown its inputs, or of no members, leaves its members to be judged as they come.
  if (fleet && (typeof fleet.size !== "number" || fleet.size === 0)) return;
  if (reportedWithFleet(INSTANCE_GPUS, instance)) return;
  const { name, running, gpuNums } = instance;
  if (running === false || gpuNums === undefined) return;
  if (gpuNums instanceof Unknown) return undecided(gpuNums);
  if (gpuNums <= cap) return;
  if (running instanceof Unknown) return undecided(running);
  if (!fleet) return report(`"${name}" would have ${gpuNums} GPUs, over maxGpusPerInstance ${cap}.`);
  reportedForMembers(INSTANCE_GPUS, fleet.urn);
  report(
    `Fleet "${name}" would give each of its ${String(fleet.size)} members ${gpuNums} GPUs, over maxGpusPerInstance ${cap}.`,
  );
}

export interface StackGpusConfig {
  maxGpusPerStack?: number;
}

export const STACK_GPUS_DEFAULTS = { maxGpusPerStack: 16 };

/** The stack's running Instances have at most `maxGpusPerStack` GPUs together; stopped ones count none. */
export const stackGpus: StackValidationPolicy = refusingUnknownConfig({
  name: "gpucloud-stack-gpus",
  description: "The stack's running GPU instances have at most maxGpusPerStack GPUs together.",
  enforcementLevel: "mandatory",
  configSchema: {
    properties: {
      maxGpusPerStack: {
        type: "integer",
        minimum: 1,
        default: STACK_GPUS_DEFAULTS.maxGpusPerStack,
        description: "The most GPUs the stack's running instances may have together.",
      },
    },
  },
  validateStack: checkStackGpus,
});

function checkStackGpus(args: StackValidationArgs, report: ReportViolation): void {
  const cap = args.getConfig<StackGpusConfig>().maxGpusPerStack ?? STACK_GPUS_DEFAULTS.maxGpusPerStack;
  let known = 0;
  const counted: InstanceFacts[] = [];
  let unknown: Unknown | undefined;
  for (const instance of instancesOf(args.resources)) {
    const { running, gpuNums } = instance;
    if (running === false) continue;
    const notYet = firstUnknown(running, gpuNums);
    if (notYet) unknown ??= notYet;
    else if (typeof gpuNums === "number") {
      known += gpuNums;
      counted.push(instance);
    }
  }
  // Instances not known until up only add GPUs: over the cap already is over the cap.
  if (known > cap) {
    const more = unknown ? " (and more whose GPU count is not known until up)" : "";
    const fleets = fleetGpus(counted);
    const among = fleets.length > 0 ? `, among them ${fleets.join("; ")}` : "";
    report(
      `The stack's ${counted.length} running instances would have ${known} GPUs together${more}, over maxGpusPerStack ` +
        `${cap}${among}. Check the instance count and gpuNums, or raise maxGpusPerStack in the policy pack config.`,
    );
  } else if (unknown) undecided(unknown);
}
