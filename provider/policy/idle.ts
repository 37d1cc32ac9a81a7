/**
 * Idle instances: every running Instance is stopped by something (an IdleClosePolicy or a scheduled
 * `shutdownAt`), and, where the pack's config forbids it, no idle policy destroys its instance.
 */
import type {
  PolicyResource,
  ReportViolation,
  ResourceValidationArgs,
  ResourceValidationPolicy,
  StackValidationArgs,
  StackValidationPolicy,
} from "@pulumi/policy";
import { refusingUnknownConfig } from "./config";
import { firstUnknown, instancesOf, kindOf, read, undecided, Unknown, type InstanceFacts } from "./resources";

/** Every running Instance has an IdleClosePolicy or a `shutdownAt`. */
export const idleShutdown: StackValidationPolicy = refusingUnknownConfig({
  name: "gpucloud-idle-shutdown",
  description:
    "Every running GPU instance has an IdleClosePolicy or a shutdownAt, so an idle one stops billing.",
  enforcementLevel: "advisory",
  validateStack: checkIdleShutdown,
});

function checkIdleShutdown(args: StackValidationArgs, report: ReportViolation): void {
  const instances = instancesOf(args.resources);
  const watched = watchedInstances(args.resources, instances);
  let unknown: Unknown | undefined;
  for (const instance of instances) {
    if (instance.running === false || watched.urns.has(instance.urn)) continue;
    if (typeof instance.shutdownAt === "number" || typeof instance.shutdownAt === "string") continue;
    // A policy whose instance is not known yet may watch this one; a power state or shutdown not known yet may be set.
    const notYet = watched.unresolved ?? firstUnknown(instance.running, instance.shutdownAt);
    if (notYet) {
      unknown ??= notYet;
      continue;
    }
    report(
      `"${instance.name}" would run with no IdleClosePolicy and no shutdownAt: an idle instance bills by the ` +
        "hour until someone stops it. Add an IdleClosePolicy whose instanceUuid is this instance's, or set shutdownAt.",
      instance.urn,
    );
  }
  if (unknown) undecided(unknown);
}

/**
 * The Instances the stack's IdleClosePolicies watch. A policy names its instance by `instanceUuid`; in a
 * preview that uuid is not known for an instance still to be made, so the engine's record of which
 * resource the input came from (its property dependencies, else its dependencies) links them.
 */
function watchedInstances(
  resources: readonly PolicyResource[],
  instances: readonly InstanceFacts[],
): { urns: Set<string>; unresolved?: Unknown } {
  const urns = new Set<string>();
  let unresolved: Unknown | undefined;
  const byUuid = new Map(
    instances.flatMap((i) => (typeof i.instanceUuid === "string" ? [[i.instanceUuid, i.urn] as const] : [])),
  );
  for (const policy of resources.filter((r) => kindOf(r.type) === "IdleClosePolicy")) {
    const uuid = read(policy.props, "instanceUuid");
    const linked = typeof uuid === "string" ? byUuid.get(uuid) : undefined;
    const sources = instanceSources(policy);
    if (linked) urns.add(linked);
    else if (sources.length > 0) sources.forEach((urn) => urns.add(urn));
    else if (uuid instanceof Unknown) unresolved ??= uuid;
  }
  return { urns, unresolved };
}

function instanceSources(policy: PolicyResource): string[] {
  const fromProperty = policy.propertyDependencies?.instanceUuid ?? [];
  const candidates = fromProperty.length > 0 ? fromProperty : (policy.dependencies ?? []);
  const instances = candidates.filter((r) => kindOf(r.type) === "Instance").map((r) => r.urn);
  // Dependencies alone are only a link when they name one instance.
  return fromProperty.length > 0 || instances.length === 1 ? instances : [];
}

/** No IdleClosePolicy destroys its instance (`destroyOnIdle`): off unless the pack's config turns it on. */
export const noDestroyOnIdle: ResourceValidationPolicy = refusingUnknownConfig({
  name: "gpucloud-no-destroy-on-idle",
  description:
    "No IdleClosePolicy destroys its instance when idle (destroyOnIdle), which loses the instance's disk.",
  enforcementLevel: "disabled",
  validateResource: checkDestroyOnIdle,
});

function checkDestroyOnIdle(args: ResourceValidationArgs, report: ReportViolation): void {
  if (kindOf(args.type) !== "IdleClosePolicy") return;
  const destroys = read(args.props, "destroyOnIdle");
  if (destroys instanceof Unknown) return undecided(destroys);
  if (destroys !== true) return;
  report(
    `"${args.name}" destroys its instance when it goes idle (destroyOnIdle: true): the instance's disk and ` +
      "everything not saved as an image is lost. Set destroyOnIdle to false to stop the instance instead.",
  );
}
