/**
 * The Fleet component (docs/design/contracts.md#fleet): N identical Instances, each with its idle policy,
 * declared as one resource. Its inputs are the Instance's own for what the members are made of (one
 * declaration, ./members.ts MEMBER_SPEC), the IdleClosePolicy's for their policies, and the fleet's size.
 */
import { z } from "zod";
import { crossFieldRule } from "../framework/check";
import { defineComponent, type ComponentDefinition } from "../framework/define-component";
import type { Inputs } from "../framework/define-resource";
import { IdleClosePolicyInputs } from "../resources/idle-close-policy";
import { rulesOf, withRules } from "../framework/input-rules";
import { InstanceInputs } from "../resources/instance/inputs";
import { declareMembers, MEMBER_SPEC, REPLACE_MEMBERS, type FleetShape } from "./members";

export const MAX_FLEET_SIZE = 1000;

const SIZE_RULE = `must be a whole number from 0 to ${MAX_FLEET_SIZE}`;
const memberSpec = InstanceInputs.pick(
  Object.fromEntries(MEMBER_SPEC.map((input) => [input, true])) as Record<(typeof MEMBER_SPEC)[number], true>,
);

/** The inputs that decide which children the fleet declares: they cannot wait for an `up` to be known. */
const DECIDES_MEMBERS = { knownBecauseItDecides: "which members the fleet has" };

const FleetInputs = z.object({
  size: withRules(
    z
      .number({ error: SIZE_RULE })
      .refine((n) => Number.isInteger(n) && n >= 0 && n <= MAX_FLEET_SIZE, {
        error: (i) => `${SIZE_RULE}, got ${String(i.input)}`,
      })
      .meta({ type: "integer", minimum: 0, maximum: MAX_FLEET_SIZE })
      .describe(
        `How many members: ${"`<fleet>-0`"} to ${"`<fleet>-<size - 1>`"}, a whole number from 0 to ${MAX_FLEET_SIZE}.`,
      ),
    DECIDES_MEMBERS,
  ),
  // The Instance's own schemas, with the rules they keep (exactly one of podUuid, imageUuid; podTag with podUuid).
  ...memberSpec.shape,
  idlePeriodMinutes: withRules(
    IdleClosePolicyInputs.shape.idlePeriodMinutes
      .optional()
      .describe(
        "Gives every member an idle policy `<fleet>-<i>-idle` that shuts it down once all its GPUs stayed idle this " +
          "long: 10, 30, 60 or 120 minutes. Absent: the members have no idle policy.",
      ),
    DECIDES_MEMBERS,
  ),
  destroyOnIdle: IdleClosePolicyInputs.shape.destroyOnIdle.describe(
    "With idlePeriodMinutes: the policies also destroy a member they shut down (irreversible).",
  ),
  replaceMembers: withRules(
    z
      .enum(REPLACE_MEMBERS, { error: `must be one of ${REPLACE_MEMBERS.join(", ")}` })
      .default("allAtOnce")
      .describe(
        "How a change of what the members are made of replaces them. `allAtOnce`: every member at the same " +
          "time, as the engine replaces any resource (each new member is made before its old one is deleted). " +
          "`oneAtATime`: member 0, then member 1, ..., each once the one before is done, so a spec that fails " +
          "stops at its first member; new members are then created one at a time too.",
      ),
    DECIDES_MEMBERS,
  ),
});
type FleetInputs = Inputs<typeof FleetInputs>;

const DESTROY_NEEDS_PERIOD = "destroyOnIdle acts through the idle policies; it needs idlePeriodMinutes";
const destroyNeedsPeriod = crossFieldRule<FleetInputs>(DESTROY_NEEDS_PERIOD, (i) =>
  i.destroyOnIdle === true && i.idlePeriodMinutes === undefined
    ? [{ property: "destroyOnIdle", reason: DESTROY_NEEDS_PERIOD }]
    : [],
);

/** What a change of one of the members' inputs does, as the Instance's own rules decide it. */
function memberChange(input: (typeof MEMBER_SPEC)[number]): string {
  const rules = rulesOf(InstanceInputs.shape[input]);
  if (!rules.replaces) return "updates every member in place";
  const unchanged = rules.keepWhenUnset ? " (nothing when unset)" : "";
  const stillListed = rules.listsChoicesOf
    ? ` (nothing for a member whose ${rules.listsChoicesOf} the new gpuUuid and fallbackGpuUuids still hold)`
    : "";
  return `replaces every member, as replaceMembers says${unchanged}${stillListed}`;
}

export const fleet: ComponentDefinition<"Fleet", typeof FleetInputs> = defineComponent({
  name: "Fleet",
  description:
    "A fleet of `size` identical GPU instances, each with its idle policy when `idlePeriodMinutes` is set, " +
    "declared as one component resource. Its members are Instances named `<fleet>-<i>` (i from 0) with " +
    "IdleClosePolicies named `<fleet>-<i>-idle`, its children; each member is titled with its own autoname " +
    "(`<fleet>-<i>-<7 hex>`), the owner's mark. Growing adds members at the end and shrinking removes them " +
    "from the end; the others are untouched.",
  example: [
    'const gpu = await gpucloud.getGpu({ name: "4090D" });',
    'const pod = await gpucloud.getPod({ title: "ComfyUI" });',
    'const trainers = new gpucloud.Fleet("trainers", {',
    "  size: 3,",
    "  podUuid: pod.podUuid,",
    "  gpuUuid: gpu.gpuUuid,",
    "  gpuNums: 1,",
    "  // Each member shuts down once its GPUs stayed idle for 30 minutes.",
    "  idlePeriodMinutes: 30,",
    "});",
    "return { urls: trainers.serverUrls, hourlyPrice: trainers.hourlyPrice };",
  ],
  inputs: FleetInputs,
  outputs: {
    instanceUuids: z.array(z.string()).describe("The members' instance uuids, member i at index i."),
    serverUrls: z
      .array(z.array(z.string()))
      .describe("The addresses of each member's web services, member i at index i."),
    hourlyPrice: z
      .number()
      .describe(
        "What the running members cost per hour together, in CNY, estimated from the catalogue before anything " +
          "is rented (known at preview): size × (the pod's hourly price + the GPU model's hourly price × gpuNums); " +
          "a member made from an image counts the GPU alone; 0 when running is false.",
      ),
  },
  checks: [destroyNeedsPeriod],
  changes: {
    size: "adds members at the end or removes them from the end; the others are untouched",
    ...(Object.fromEntries(MEMBER_SPEC.map((input) => [input, memberChange(input)])) as Record<
      (typeof MEMBER_SPEC)[number],
      string
    >),
    idlePeriodMinutes:
      "updates every member's idle policy in place; set, it gives every member one; removed, it removes them",
    destroyOnIdle: "updates every member's idle policy in place",
    replaceMembers:
      "changes no member: it decides how the next change of what they are made of replaces them",
  },
  declare: (scope, checked, given) => declareMembers(scope, checked as FleetShape, given),
});
