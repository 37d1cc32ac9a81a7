/**
 * GPU count caps: per instance and per stack. They need no prices, so they hold even where the catalogue
 * cannot be read, and they catch the `count` typo that would rent eighty cards.
 */
import type {
  ReportViolation,
  ResourceValidationArgs,
  ResourceValidationPolicy,
  StackValidationArgs,
  StackValidationPolicy,
} from "@pulumi/policy";
import { refusingUnknownConfig } from "./config";
import { firstUnknown, instanceFacts, instancesOf, kindOf, undecided, Unknown } from "./resources";

export interface InstanceGpusConfig {
  maxGpusPerInstance?: number;
}

export const INSTANCE_GPUS_DEFAULTS = { maxGpusPerInstance: 8 };

/** Each running Instance has at most `maxGpusPerInstance` GPUs. */
export const instanceGpus: ResourceValidationPolicy = refusingUnknownConfig({
  name: "gpucloud-instance-gpus",
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
  if (kindOf(args.type) !== "Instance") return;
  const cap =
    args.getConfig<InstanceGpusConfig>().maxGpusPerInstance ?? INSTANCE_GPUS_DEFAULTS.maxGpusPerInstance;
  const { name, running, gpuNums } = instanceFacts(args);
  if (running === false || gpuNums === undefined) return;
  if (gpuNums instanceof Unknown) return undecided(gpuNums);
  if (gpuNums <= cap) return;
  if (running instanceof Unknown) return undecided(running);
  report(`"${name}" would have ${gpuNums} GPUs, over maxGpusPerInstance ${cap}.`);
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
  let counted = 0;
  let unknown: Unknown | undefined;
  for (const { running, gpuNums } of instancesOf(args.resources)) {
    if (running === false) continue;
    const notYet = firstUnknown(running, gpuNums);
    if (notYet) unknown ??= notYet;
    else if (gpuNums !== undefined && !(gpuNums instanceof Unknown)) {
      known += gpuNums;
      counted++;
    }
  }
  // Instances not known until up only add GPUs: over the cap already is over the cap.
  if (known > cap) {
    const more = unknown ? " (and more whose GPU count is not known until up)" : "";
    report(
      `The stack's ${counted} running instances would have ${known} GPUs together${more}, over maxGpusPerStack ${cap}. ` +
        "Check the instance count and gpuNums, or raise maxGpusPerStack in the policy pack config.",
    );
  } else if (unknown) undecided(unknown);
}
