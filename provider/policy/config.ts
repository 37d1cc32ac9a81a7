/**
 * The pack config each policy is given, refused when it names a key the policy does not take. The engine
 * checks the values of a policy's config against its schema but lets unknown keys through, so a typo
 * (`maxHourlyCots`) would leave the default in force without a word.
 */
import type {
  Policy,
  ReportViolation,
  ResourceValidation,
  ResourceValidationArgs,
  ResourceValidationPolicy,
  StackValidation,
  StackValidationArgs,
  StackValidationPolicy,
} from "@pulumi/policy";

/** Keys the cost guard no longer takes, and why: a key users set once is refused with its reason. */
const WITHDRAWN: Record<string, string> = {
  baseUrl:
    "the cost guard reads the cloud only at the stack's own endpoint (gpucloud:baseUrl or GPUCLOUD_BASE_URL), " +
    "the one address that may receive the stack's API key. Remove baseUrl from the policy pack config.",
};

/** The config keys `policy` takes, besides `enforcementLevel`. */
function knownKeys(policy: Policy): string[] {
  return Object.keys(policy.configSchema?.properties ?? {});
}

/** Throws when the pack config gives `policy` a key it does not take, naming the key, the policy and the keys it takes. */
function refuseUnknownKeys(policy: Policy, config: object): void {
  const known = knownKeys(policy);
  const unknown = Object.keys(config).filter((key) => !known.includes(key));
  if (unknown.length === 0) return;
  const [key] = unknown;
  const takes =
    known.length > 0 ? `takes ${known.join(", ")} and enforcementLevel` : "takes only enforcementLevel";
  const why = WITHDRAWN[key] ?? `${policy.name} ${takes}. Fix the key in the policy pack config.`;
  throw new Error(
    `The policy pack config gives ${policy.name} the key "${key}", which it does not take: ${why}`,
  );
}

/**
 * `policy`, refusing a pack config with a key it does not take before it checks anything: the run
 * fails with the message rather than pass on a setting that was never applied.
 */
export function refusingUnknownConfig<P extends ResourceValidationPolicy | StackValidationPolicy>(
  policy: P,
): P {
  const checked = { ...policy };
  if ("validateResource" in policy && policy.validateResource) {
    const checkFirst =
      (validate: ResourceValidation): ResourceValidation =>
      (args: ResourceValidationArgs, report: ReportViolation) => {
        refuseUnknownKeys(policy, args.getConfig<object>());
        return validate(args, report);
      };
    const validations = policy.validateResource;
    (checked as ResourceValidationPolicy).validateResource = Array.isArray(validations)
      ? validations.map(checkFirst)
      : checkFirst(validations);
  }
  if ("validateStack" in policy && policy.validateStack) {
    const validate: StackValidation = policy.validateStack;
    (checked as StackValidationPolicy).validateStack = (
      args: StackValidationArgs,
      report: ReportViolation,
    ) => {
      refuseUnknownKeys(policy, args.getConfig<object>());
      return validate(args, report);
    };
  }
  return checked;
}
