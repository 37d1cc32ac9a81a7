/** The IdleClosePolicy resource: an instance's idle shutdown rule, set_idle_close (DESIGN §3). */
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { NotFoundError, type Instance as CloudInstance } from "../sdk";
import { checkInputs, type CheckFailure } from "./check";
import { client, configure } from "./config";
import { diffInputs, type DiffRules } from "./diff";
import { instanceReads } from "./instance-reads";
import { shimProvider } from "./shim";
import { plainJson, type Inputs } from "./util";

/** api-v2.md set_idle_close: 0 cancels, so a policy takes one of the others. */
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

export const IdleClosePolicyInputsSchema = z.object({
  instanceUuid: z
    .string({ error: "must be a string (an instance uuid)" })
    .min(1, "must not be empty")
    .describe("The instance the policy watches."),
  idlePeriodMinutes: z
    .number({ error: `must be one of ${PERIODS.join(", ")}` })
    .refine((n) => (PERIODS as readonly number[]).includes(n), {
      error: (i) => `must be one of ${PERIODS.join(", ")}, got ${String(i.input)}`,
    })
    .describe("How long every GPU must stay idle before the instance is shut down."),
  destroyOnIdle: z
    .boolean({ error: "must be a boolean" })
    .default(false)
    .describe("Also destroy the instance when it is shut down for idleness (irreversible)."),
  gpuThreshold: threshold("GPU"),
  memoryThreshold: threshold("Video-memory"),
});
export type IdleClosePolicyInputs = z.output<typeof IdleClosePolicyInputsSchema>;
export type IdleClosePolicyArgs = Inputs<z.input<typeof IdleClosePolicyInputsSchema>>;

export const IDLE_CLOSE_POLICY_DIFF: DiffRules = {
  update: ["idlePeriodMinutes", "destroyOnIdle", "gpuThreshold", "memoryThreshold"],
  replace: ["instanceUuid"],
};

async function apply(inputs: IdleClosePolicyInputs): Promise<Record<string, unknown>> {
  await client().client.instances.setIdleClose({
    instance_uuid: inputs.instanceUuid,
    idle_period_minutes: inputs.idlePeriodMinutes,
    destroy: inputs.destroyOnIdle,
    idle_gpu_threshold: inputs.gpuThreshold,
    idle_fb_threshold: inputs.memoryThreshold,
  });
  return plainJson({ ...inputs });
}

/**
 * The policy as the cloud reports it. `idle_close` is not in api-v2.md: the emulator reports it and the
 * live service may not, so an instance record without it keeps the inputs as they are.
 */
function reportedPolicy(cloud: CloudInstance, inputs: IdleClosePolicyInputs): IdleClosePolicyInputs | "none" {
  const policy = cloud.idle_close;
  if (policy === undefined) return inputs;
  if (policy === null || policy.idle_period_minutes === 0) return "none";
  return {
    instanceUuid: cloud.instance_uuid,
    idlePeriodMinutes: policy.idle_period_minutes,
    destroyOnIdle: policy.destroy,
    gpuThreshold: policy.idle_gpu_threshold,
    memoryThreshold: policy.idle_fb_threshold,
  };
}

async function read(id: string, props: Record<string, unknown>): Promise<pulumi.dynamic.ReadResult> {
  let cloud: CloudInstance;
  try {
    cloud = await instanceReads(client().client).info(id);
  } catch (err) {
    if (err instanceof NotFoundError) return { id: "", props: {} };
    throw err;
  }
  const policy = reportedPolicy(cloud, props as IdleClosePolicyInputs);
  if (policy === "none") return { id: "", props: {} };
  return { id, props: plainJson(policy), inputs: plainJson(policy) };
}

async function remove(id: string): Promise<void> {
  try {
    await client().client.instances.setIdleClose({ instance_uuid: id, idle_period_minutes: 0 });
  } catch (err) {
    // The instance is gone, and its policy with it.
    if (!(err instanceof NotFoundError)) throw err;
  }
}

export const idleClosePolicyProvider: Required<pulumi.dynamic.ResourceProvider> = {
  async configure(req) {
    configure(req.config);
  },
  async check(_olds, news) {
    return checkInputs(IdleClosePolicyInputsSchema, news) as {
      inputs: Record<string, unknown>;
      failures: CheckFailure[];
    };
  },
  async diff(_id, olds, news) {
    return diffInputs(olds, news, IDLE_CLOSE_POLICY_DIFF);
  },
  async create(inputs) {
    const i = inputs as IdleClosePolicyInputs;
    return { id: i.instanceUuid, outs: await apply(i) };
  },
  read,
  async update(_id, _olds, news) {
    return { outs: await apply(news as IdleClosePolicyInputs) };
  },
  delete: remove,
};

/** Shuts an instance down (or destroys it) when all its GPUs stay idle for a while. Its id is the instance's uuid. */
export class IdleClosePolicy extends pulumi.dynamic.Resource {
  declare readonly instanceUuid: pulumi.Output<string>;
  declare readonly idlePeriodMinutes: pulumi.Output<number>;
  declare readonly destroyOnIdle: pulumi.Output<boolean>;
  declare readonly gpuThreshold: pulumi.Output<number>;
  declare readonly memoryThreshold: pulumi.Output<number>;

  constructor(name: string, args: IdleClosePolicyArgs, opts?: pulumi.CustomResourceOptions) {
    const outs = { destroyOnIdle: undefined, gpuThreshold: undefined, memoryThreshold: undefined };
    super(shimProvider("IdleClosePolicy"), name, { ...outs, ...args }, opts, "gpucloud", "IdleClosePolicy");
  }
}
