/**
 * The IdleClosePolicy resource: an instance's idle shutdown rule, set_idle_close
 * (docs/design/contracts.md#idleclosepolicy). Its id is the instance's uuid.
 */
import { z } from "zod";
import { instanceStatusName, NotFoundError, type Instance as CloudInstance } from "../../sdk";
import { warn, type ProviderContext } from "../framework/context";
import { defineResource, type Inputs } from "../framework/define-resource";
import { withRules } from "../framework/input-rules";
import { CANNOT_RUN } from "./instance/cloud";
import { instanceReads } from "./instance/memory";
import { messageOf } from "../framework/errors";

/** The resource's type name; its reads share instance walks under it (InstanceReads.read). */
const POLICY = "IdleClosePolicy";

/** An idle period of 0 cancels the rule, so a policy takes one of the others (docs/design/cloud-api.md#idle-close). */
const PERIODS = [10, 30, 60, 120] as const;

const threshold = (what: string) =>
  z
    .number({ error: "must be an integer from 0 to 100" })
    .int("must be an integer from 0 to 100")
    .min(0, "must be an integer from 0 to 100")
    .max(100, "must be an integer from 0 to 100")
    .default(0)
    .describe(
      `${what} utilisation threshold in percent: 0 = the platform's threshold, 100 = skip this check.`,
    );

export const IdleClosePolicyInputs = z.object({
  instanceUuid: withRules(
    z
      .string({ error: "must be a string (an instance uuid)" })
      .min(1, "must not be empty")
      .describe("The instance the policy watches."),
    { replaces: true },
  ),
  idlePeriodMinutes: z
    .number({ error: `must be one of ${PERIODS.join(", ")}` })
    .refine((n) => (PERIODS as readonly number[]).includes(n), {
      error: (i) => `must be one of ${PERIODS.join(", ")}, got ${String(i.input)}`,
    })
    .meta({ type: "integer", rule: `one of ${PERIODS.join(", ")}` })
    .describe(
      `How long every GPU must stay idle before the instance is shut down: ${PERIODS.join(", ")} minutes.`,
    ),
  destroyOnIdle: z
    .boolean({ error: "must be a boolean" })
    .default(false)
    .describe("Also destroy the instance when it is shut down for idleness (irreversible)."),
  gpuThreshold: threshold("GPU"),
  memoryThreshold: threshold("Video-memory"),
});
type IdleClosePolicyInputs = Inputs<typeof IdleClosePolicyInputs>;

async function apply(ctx: ProviderContext, inputs: IdleClosePolicyInputs) {
  await ctx.api.instances.setIdleClose({
    instance_uuid: inputs.instanceUuid,
    idle_period_minutes: inputs.idlePeriodMinutes,
    destroy: inputs.destroyOnIdle,
    idle_gpu_threshold: inputs.gpuThreshold,
    idle_fb_threshold: inputs.memoryThreshold,
  });
  return { inputs, cloud: undefined };
}

/**
 * The policy as the cloud reports it: "none" when there is none, "unreported" when the instance record
 * does not carry it (`idle_close` is not in the API: the emulator reports it, the live service may not;
 * docs/design/cloud-api.md#what-the-api-leaves-unknown).
 */
function reportedPolicy(cloud: CloudInstance): IdleClosePolicyInputs | "none" | "unreported" {
  const policy = cloud.idle_close;
  if (policy === undefined) return "unreported";
  if (policy === null || policy.idle_period_minutes === 0) return "none";
  return {
    instanceUuid: cloud.instance_uuid,
    idlePeriodMinutes: policy.idle_period_minutes,
    destroyOnIdle: policy.destroy,
    gpuThreshold: policy.idle_gpu_threshold,
    memoryThreshold: policy.idle_fb_threshold,
  };
}

/**
 * Why a policy the cloud refuses to cancel no longer matters, or undefined when it still does. An
 * instance stopped abnormally (status 23) cannot run, so its idle policy can never fire, and the cloud
 * refuses set_idle_close on it. Such an instance is typically destroyed next, and Pulumi deletes the
 * policy before its instance: a refused cancel must not block that destroy.
 */
async function whyPolicyIsMoot(ctx: ProviderContext, instanceUuid: string): Promise<string | undefined> {
  let cloud: CloudInstance | undefined;
  try {
    cloud = await instanceReads(ctx).unlessGone(instanceUuid, POLICY);
  } catch {
    // Nothing more is known: the refusal stands.
    return undefined;
  }
  if (cloud === undefined) return "the instance no longer exists";
  if (CANNOT_RUN.includes(cloud.status))
    return `the instance cannot run anymore (status ${cloud.status}, ${instanceStatusName(cloud.status)}), so the policy can never fire`;
  if (reportedPolicy(cloud) === "none") return "the cloud shows no policy on the instance";
  return undefined;
}

export const idleClosePolicy = defineResource({
  name: POLICY,
  description: "Shuts an instance down (or destroys it) when all its GPUs stay idle for a while.",
  id: "the uuid of the instance it watches (its instanceUuid); an instance has at most one idle policy",
  example: [
    'const gpu = await gpucloud.getGpu({ name: "4090D" });',
    'const pod = await gpucloud.getPod({ title: "ComfyUI" });',
    'const worker = new gpucloud.Instance("worker", { podUuid: pod.podUuid, gpuUuid: gpu.gpuUuid, gpuNums: 1 });',
    "// Shut the worker down once every GPU has stayed idle for 30 minutes.",
    'new gpucloud.IdleClosePolicy("worker-idle", { instanceUuid: worker.instanceUuid, idlePeriodMinutes: 30 });',
  ],
  inputs: IdleClosePolicyInputs,
  outputs: {},
  async create(ctx, inputs) {
    return { id: inputs.instanceUuid, ...(await apply(ctx, inputs)) };
  },
  async read(ctx, id, olds) {
    // The instance gone means the policy is gone.
    const cloud = await instanceReads(ctx).unlessGone(id, POLICY);
    const policy = cloud && reportedPolicy(cloud);
    if (policy === undefined || policy === "none") return undefined;
    return { inputs: policy === "unreported" ? olds : policy, cloud: undefined };
  },
  update: (ctx, _id, _olds, news) => apply(ctx, news),
  async delete(ctx, id) {
    try {
      await ctx.api.instances.setIdleClose({ instance_uuid: id, idle_period_minutes: 0 });
    } catch (err) {
      if (err instanceof NotFoundError) {
        warn(`The idle policy of instance ${id} was already gone with its instance; nothing to cancel.`);
        return;
      }
      const moot = await whyPolicyIsMoot(ctx, id);
      if (moot === undefined) throw err;
      warn(
        `IdleClosePolicy of instance ${id}: removed from the stack without cancelling it in the cloud, because ${moot}. ` +
          `The cloud refused the cancel: ${messageOf(err)}`,
      );
    }
  },
  async import(ctx, id) {
    const cloud = await instanceReads(ctx).unlessGone(id, POLICY);
    const policy = cloud && reportedPolicy(cloud);
    if (policy === undefined || policy === "none") {
      throw new Error(
        `Could not import the idle policy of instance ${id}: ${cloud ? "it has none" : "the instance does not exist or belongs to another user"}.`,
      );
    }
    if (policy === "unreported") {
      throw new Error(
        `Could not import the idle policy of instance ${id}: the cloud does not report idle policies, so its settings cannot be read. ` +
          "Declare the policy in your program instead; creating it sets the policy you declare.",
      );
    }
    return { inputs: policy, cloud: undefined };
  },
});
