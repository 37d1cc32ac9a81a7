/**
 * A fleet's children (docs/design/contracts.md#fleet): members `<fleet>-<i>`, Instances made of the fleet's
 * spec, each with its policy `<fleet>-<i>-idle` when the fleet has an idle period. Member i is the same
 * resource from one run to the next, so growing adds members at the end, shrinking leaves the end ones out
 * of the program (the engine deletes them), and the others are untouched.
 */
import * as pulumi from "@pulumi/pulumi";
import type { ComponentScope } from "../framework/define-component";
import { memberName } from "./member-names";
import { fleetHourlyPrice } from "./price";

/** The Instance inputs every member is made with: adding one to the fleet is adding it here. */
export const MEMBER_SPEC = [
  "podUuid",
  "podTag",
  "imageUuid",
  "gpuUuid",
  "fallbackGpuUuids",
  "gpuNums",
  "running",
  "waitForServices",
  "waitTimeoutSeconds",
] as const;

export const REPLACE_MEMBERS = ["allAtOnce", "oneAtATime"] as const;

/** The checked inputs that decide which children there are (known when the fleet is declared: its checks say so). */
export interface FleetShape {
  size: number;
  idlePeriodMinutes?: number;
  replaceMembers: (typeof REPLACE_MEMBERS)[number];
}

type Member = pulumi.CustomResource & Record<string, pulumi.Output<unknown>>;

export function declareMembers(
  { component, name, kit }: ComponentScope,
  shape: FleetShape,
  given: Record<string, pulumi.Input<unknown>>,
): Record<string, pulumi.Input<unknown>> {
  const spec = Object.fromEntries(MEMBER_SPEC.map((input) => [input, given[input]]));
  const members: Member[] = [];
  for (let index = 0; index < shape.size; index++) {
    const previous = members.at(-1);
    const inputs = shape.replaceMembers === "oneAtATime" && previous ? afterPrevious(spec, previous) : spec;
    const member = kit.resource("Instance", memberName(name, index), inputs, { parent: component });
    if (shape.idlePeriodMinutes !== undefined) {
      kit.resource(
        "IdleClosePolicy",
        `${memberName(name, index)}-idle`,
        {
          instanceUuid: member.instanceUuid,
          idlePeriodMinutes: shape.idlePeriodMinutes,
          destroyOnIdle: given.destroyOnIdle,
        },
        { parent: component },
      );
    }
    members.push(member);
  }
  return {
    instanceUuids: pulumi.all(members.map((m) => m.instanceUuid)),
    serverUrls: pulumi.all(members.map((m) => m.serverUrls)),
    hourlyPrice: hourlyPrice(shape.size, given),
  };
}

/** Unknown at preview only while what it depends on is (a pod or GPU from a resource not made yet). */
function hourlyPrice(size: number, given: Record<string, pulumi.Input<unknown>>): pulumi.Output<number> {
  const { running, podUuid, gpuUuid, gpuNums } = given;
  return pulumi.all([running, podUuid, gpuUuid, gpuNums]).apply(([running, podUuid, gpuUuid, gpuNums]) =>
    fleetHourlyPrice({
      size,
      running: running !== false,
      podUuid: podUuid as string | undefined,
      gpuUuid: gpuUuid as string,
      gpuNums: gpuNums as number,
    }),
  );
}

/**
 * The spec of a member that waits for the member before it: the engine is sent a resource once its inputs
 * are known, and it answers once that resource's step is done, so member i is planned and changed only once
 * member i-1 is (a replacement that fails stops the rollout at that member). The wait is made of a plain
 * promise, not of the member before: it adds no dependency, so a shrink or a destroy still deletes members
 * in parallel. A preview plans every member at once: it changes nothing to wait for.
 */
function afterPrevious(spec: Record<string, pulumi.Input<unknown>>, previous: Member) {
  if (pulumi.runtime.isDryRun()) return spec;
  const done = pulumi.output(new Promise<void>((resolve) => previous.urn.apply(() => resolve())));
  return { ...spec, gpuUuid: pulumi.all([done, spec.gpuUuid]).apply(([, gpuUuid]) => gpuUuid) };
}
