/** The Instance resource: a rented GPU instance (DESIGN §3). Inputs, replace rules, CRUD and the class. */
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import {
  collect,
  GPU_NUMS,
  instanceStatusName,
  isTransientError,
  NotFoundError,
  OutcomeUnknownError,
  TimeoutError,
  TITLE_MAX,
  type GpuCloudClient,
  type Instance as CloudInstance,
} from "../sdk";
import { checkInputs, exactlyOneOf, isUnknown, type CheckFailure, type CrossFieldRule } from "./check";
import { client, configure } from "./config";
import { diffInputs, sameValue, type DiffRules } from "./diff";
import { instanceReads, type InstanceReads } from "./instance-reads";
import { plainJson, serialised, withSecretOutputs, type Inputs } from "./util";
import { shimProvider } from "./shim";

/** field-notes.md: clients send a scheduled shutdown at least 5 minutes ahead. */
const SHUTDOWN_LEAD_SECONDS = 300;
// Status codes as field-notes.md names them ("Instance life").
const RUNNING = 2;
const SHUTTING_DOWN = [3, 21];
const STOPPED = [4, 22, 23];
/** Statuses on the way to running (or running): the instance counts as powered on. */
const POWERED_ON = [0, 1, 2, 24, 27];

const uuid = (what: string) =>
  z.string({ error: `must be a string (${what})` }).min(1, `must not be empty (${what})`);

/** shutdownAt: Unix seconds, or an ISO 8601 time with a zone; stored as Unix seconds. */
const shutdownAt = z
  .union([z.number().int().positive(), z.iso.datetime({ offset: true })], {
    error:
      "must be Unix seconds (a positive integer) or an ISO 8601 time with a zone, e.g. 2026-01-02T03:04:05Z",
  })
  .transform((v) => (typeof v === "number" ? v : Math.floor(Date.parse(v) / 1000)));

export const InstanceInputsSchema = z.object({
  podUuid: uuid("a pod uuid from getPods")
    .optional()
    .describe("Create from this pod (application-market template)."),
  podTag: uuid("a version tag of the pod")
    .optional()
    .describe("Pod version; the latest when absent. Only with podUuid."),
  imageUuid: uuid("a personal or market image uuid")
    .optional()
    .describe("Create from this image instead of a pod."),
  gpuUuid: uuid("a GPU model uuid from getGpu").describe("GPU model."),
  gpuNums: z
    .number({ error: `must be one of ${GPU_NUMS.join(", ")}` })
    .refine((n) => (GPU_NUMS as readonly number[]).includes(n), {
      error: (i) => `must be one of ${GPU_NUMS.join(", ")}, got ${String(i.input)}`,
    })
    .describe("Number of GPUs."),
  title: z
    .string({ error: "must be a string" })
    .refine((t) => [...t].length <= TITLE_MAX, {
      error: (i) => `must be at most ${TITLE_MAX} characters, got ${[...String(i.input)].length}`,
    })
    .optional()
    .describe("Instance name. When absent the provider leaves the cloud's title alone."),
  running: z.boolean({ error: "must be a boolean" }).default(true).describe("Desired power state."),
  shutdownAt: shutdownAt
    .optional()
    .describe("Scheduled shutdown (Unix seconds or ISO 8601); absent means none."),
  waitTimeoutSeconds: z
    .number({ error: "must be a number of seconds" })
    .int("must be a whole number of seconds")
    .positive("must be positive")
    .default(900)
    .describe("How long create and power changes wait."),
  adoptInstanceUuid: uuid("an existing instance uuid")
    .optional()
    .describe("Adopt this existing instance instead of creating one."),
});
export type InstanceInputs = z.output<typeof InstanceInputsSchema>;
export type InstanceArgs = Inputs<z.input<typeof InstanceInputsSchema>>;

export const INSTANCE_DIFF: DiffRules = {
  update: ["title", "running", "shutdownAt", "waitTimeoutSeconds"],
  replace: ["podUuid", "podTag", "imageUuid", "gpuUuid", "gpuNums", "adoptInstanceUuid"],
};

const podTagNeedsPod: CrossFieldRule<InstanceInputs> = (i) =>
  i.podTag !== undefined && !isUnknown(i.podTag) && i.imageUuid !== undefined && !isUnknown(i.imageUuid)
    ? [
        {
          property: "podTag",
          reason: "podTag goes with podUuid; an instance created from imageUuid takes no podTag",
        },
      ]
    : [];

const timerNeedsRunning: CrossFieldRule<InstanceInputs> = (i) =>
  i.shutdownAt !== undefined && i.running === false
    ? [
        {
          property: "shutdownAt",
          reason: "shutdownAt schedules the shutdown of a running instance; it needs running: true",
        },
      ]
    : [];

/** The SSH password of each ssh service, by service title: the one secret output. */
export interface ServiceOutput {
  title: string | null;
  url: string | null;
  portType: string | null;
  protocol: string | null;
  ssh: { host: string; port: number; username: string } | null;
}

function services(cloud: CloudInstance): { services: ServiceOutput[]; sshPasswords: Record<string, string> } {
  const sshPasswords: Record<string, string> = {};
  const list = (cloud.server_map ?? []).map((entry, index) => {
    if (entry.ssh_info) sshPasswords[entry.title ?? `ssh-${index}`] = entry.ssh_info.password;
    return {
      title: entry.title ?? null,
      url: entry.url ?? null,
      portType: entry.port_type ?? null,
      protocol: entry.protocol ?? null,
      ssh: entry.ssh_info
        ? { host: entry.ssh_info.host, port: entry.ssh_info.port, username: entry.ssh_info.username }
        : null,
    };
  });
  return { services: list, sshPasswords };
}

function scheduledShutdown(cloud: CloudInstance): number | undefined {
  const timer = cloud.shutdown_regular;
  return timer?.enable && timer.shutdown_time > 0 ? timer.shutdown_time : undefined;
}

/** The inputs as the cloud has them now: refresh rebuilds these so drift shows and nothing else does. */
function cloudInputs(inputs: InstanceInputs, cloud: CloudInstance): InstanceInputs {
  return plainJson({
    ...inputs,
    title: inputs.title === undefined && !cloud.title ? undefined : (cloud.title ?? ""),
    running: POWERED_ON.includes(cloud.status),
    shutdownAt: scheduledShutdown(cloud),
    gpuUuid: cloud.gpu_uuid ?? inputs.gpuUuid,
    gpuNums: cloud.gpu_nums ?? inputs.gpuNums,
  });
}

/** Every output, from the cloud, beside the inputs (the engine diffs new inputs against these). */
function outputs(inputs: InstanceInputs, cloud: CloudInstance): Record<string, unknown> {
  const timer = cloud.shutdown_regular;
  return plainJson({
    ...cloudInputs(inputs, cloud),
    instanceUuid: cloud.instance_uuid,
    status: cloud.status,
    statusName: instanceStatusName(cloud.status),
    title: cloud.title ?? "",
    serverUrls: cloud.server_url ?? [],
    ...services(cloud),
    gpuName: cloud.gpu_name ?? null,
    imageName: cloud.image_name ?? null,
    imageTag: cloud.image_tag ?? null,
    createTime: cloud.create_time ?? null,
    startTime: cloud.start_time ?? null,
    chargingType: cloud.charging_type ?? null,
    shutdownRegular: timer ? { shutdownTime: timer.shutdown_time, enable: timer.enable } : null,
  });
}

interface Ctx {
  api: GpuCloudClient;
  /** Reads and status polls, shared with every other resource of this provider process. */
  reads: InstanceReads;
  pollIntervalMs: number;
}

function context(): Ctx {
  const { client: api, settings } = client();
  return { api, reads: instanceReads(api), pollIntervalMs: settings.pollIntervalMs };
}

function waitOptions(ctx: Ctx, inputs: InstanceInputs) {
  return {
    timeoutMs: inputs.waitTimeoutSeconds * 1000,
    pollIntervalMs: ctx.pollIntervalMs,
    maxPollIntervalMs: ctx.pollIntervalMs,
  };
}

function assertTimerAhead(shutdownTime: number): void {
  const earliest = Math.floor(Date.now() / 1000) + SHUTDOWN_LEAD_SECONDS;
  if (shutdownTime < earliest) {
    throw new Error(
      `Could not schedule the shutdown: shutdownAt ${new Date(shutdownTime * 1000).toISOString()} is less than 5 minutes ahead ` +
        `(field-notes.md: the cloud wants at least 5 minutes). Set shutdownAt later or remove it.`,
    );
  }
}

function matchesSpec(cloud: CloudInstance, inputs: InstanceInputs): boolean {
  return (
    (cloud.gpu_uuid === undefined || cloud.gpu_uuid === inputs.gpuUuid) &&
    (cloud.gpu_nums === undefined || cloud.gpu_nums === inputs.gpuNums) &&
    (inputs.imageUuid === undefined ||
      cloud.image_uuid === undefined ||
      cloud.image_uuid === inputs.imageUuid)
  );
}

/** Instances this provider process created, or found new after a lost answer: never "new" to a later create. */
const createdHere = new Set<string>();

/**
 * The create call. Its answer can be lost after the cloud carried it out (create takes no idempotency
 * key, field-notes.md), so the instances listed before are compared with those listed after and the one
 * new instance of this spec is adopted. Creates run one at a time in the provider process (not only per
 * spec: instance records do not show the pod, so two pod specs on one GPU would look alike); only the
 * create call is serialised, the waits that follow run in parallel. "Before" is every instance a finished
 * list walk of this process showed (creates arriving together share one walk, and status polls keep
 * adding to it) plus every instance this process created, so only an instance made outside this process
 * since the last walk could be mistaken for ours.
 */
async function createOnce(ctx: Ctx, inputs: InstanceInputs): Promise<CloudInstance> {
  const { api, reads } = ctx;
  await reads.freshListing();
  return serialised("instance create", async () => {
    // A copy taken now: a walk that finishes while the call is out may already list the new instance.
    const before = new Set([...reads.everListed, ...createdHere]);
    try {
      const created = inputs.imageUuid
        ? await api.instances.createByImage({
            image_uuid: inputs.imageUuid,
            gpu_uuid: inputs.gpuUuid,
            gpu_nums: inputs.gpuNums,
          })
        : await api.instances.createByPod({
            pod_uuid: inputs.podUuid!,
            pod_tag: inputs.podTag,
            gpu_uuid: inputs.gpuUuid,
            gpu_nums: inputs.gpuNums,
          });
      createdHere.add(created.instance_uuid);
      return created;
    } catch (err) {
      if (!(err instanceof OutcomeUnknownError)) throw err;
      const listed = await listThroughOutage(ctx, inputs.waitTimeoutSeconds * 1000, err);
      const fresh = listed.filter((i) => !before.has(i.instance_uuid) && matchesSpec(i, inputs));
      for (const i of fresh) createdHere.add(i.instance_uuid);
      if (fresh.length === 1) return fresh[0];
      throw new Error(
        fresh.length === 0
          ? `Could not create instance: the answer to the create call was lost and no new instance is listed, so none was created. Run the update again. (${err.message})`
          : `Could not create instance: the answer to the create call was lost and ${fresh.length} new instances match (${fresh.map((i) => i.instance_uuid).join(", ")}). ` +
              "Adopt the right one with adoptInstanceUuid and destroy the others.",
      );
    }
  });
}

/**
 * Destroys the instance a failed create made, going on through transient failures until `timeoutMs`:
 * the create failed, often because the cloud was unreachable, and giving up at once would leave a paid
 * instance the state never learns of (DESIGN §3).
 */
/**
 * Every instance, for reconciling a create whose answer was lost: the listing goes on through transient
 * failures until `timeoutMs`, since giving up would leave an instance that may exist unknown to the state.
 */
async function listThroughOutage(ctx: Ctx, timeoutMs: number, lost: Error): Promise<CloudInstance[]> {
  const deadline = Date.now() + timeoutMs;
  let pause = ctx.pollIntervalMs;
  for (;;) {
    try {
      return await collect(ctx.api.instances.listAll());
    } catch (listErr) {
      if (!isTransientError(listErr) || Date.now() + pause > deadline) {
        throw new Error(
          `Could not create instance: the answer to the create call was lost (${lost.message}) and listing the instances ` +
            `to find out whether one was made failed too (${listErr instanceof Error ? listErr.message : String(listErr)}). ` +
            "List your instances and adopt (adoptInstanceUuid) or destroy any you do not recognise.",
        );
      }
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(5000, Math.ceil(pause * 1.5));
  }
}

async function destroyAfterFailure(
  ctx: Ctx,
  instanceUuid: string,
  cause: unknown,
  timeoutMs: number,
): Promise<never> {
  const why = cause instanceof Error ? cause.message : String(cause);
  const deadline = Date.now() + timeoutMs;
  let pause = ctx.pollIntervalMs;
  for (;;) {
    try {
      await ctx.api.instances.destroy(instanceUuid);
      break;
    } catch (destroyErr) {
      if (!isTransientError(destroyErr) || Date.now() + pause > deadline) {
        throw new Error(
          `Could not create instance: ${why} Destroying the half-created instance ${instanceUuid} also failed ` +
            `(${destroyErr instanceof Error ? destroyErr.message : String(destroyErr)}): destroy it in the console so it does not bill.`,
        );
      }
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(5000, Math.ceil(pause * 1.5));
  }
  throw new Error(
    `Could not create instance: ${why} The instance ${instanceUuid} was destroyed so nothing is left billing.`,
  );
}

/**
 * Brings an existing instance to the desired title, power state and timer; returns the cloud's record.
 * `created`: the record a create just answered with; its status stands in for a first read (a title
 * change does not move the status, and every wait reads afresh).
 */
async function converge(
  ctx: Ctx,
  instanceUuid: string,
  olds: Partial<InstanceInputs>,
  news: InstanceInputs,
  created?: CloudInstance,
): Promise<CloudInstance> {
  const { api, reads } = ctx;
  if (news.title !== undefined && !sameValue(olds.title, news.title))
    await api.instances.updateTitle(instanceUuid, news.title);
  let cloud = created ?? (await reads.info(instanceUuid));
  // True while `cloud` is a full record read after the last change made here.
  let current = created === undefined;
  const wait = async (statuses: number[]) => {
    const reached = await reads.waitForStatus(instanceUuid, statuses, waitOptions(ctx, news));
    current = true;
    return reached;
  };
  if (news.running) {
    if (SHUTTING_DOWN.includes(cloud.status)) cloud = await wait(STOPPED);
    if (STOPPED.includes(cloud.status)) await api.instances.startup(instanceUuid);
    if (cloud.status !== RUNNING) cloud = await wait([RUNNING]);
  } else if (!STOPPED.includes(cloud.status)) {
    if (!SHUTTING_DOWN.includes(cloud.status) && cloud.status !== RUNNING)
      cloud = await wait([RUNNING, ...STOPPED]);
    if (cloud.status === RUNNING) await api.instances.shutdown(instanceUuid);
    cloud = await wait(STOPPED);
  }
  if (news.running && scheduledShutdown(cloud) !== news.shutdownAt) {
    current = false;
    if (news.shutdownAt !== undefined) {
      assertTimerAhead(news.shutdownAt);
      await api.instances.shutdownTimer(instanceUuid, { enable: true, shutdown_time: news.shutdownAt });
    } else {
      await api.instances.shutdownTimer(instanceUuid, { enable: false, shutdown_time: 0 });
    }
  }
  return current ? cloud : reads.info(instanceUuid);
}

async function adopt(ctx: Ctx, inputs: InstanceInputs, instanceUuid: string): Promise<CloudInstance> {
  let cloud: CloudInstance;
  try {
    cloud = await ctx.reads.info(instanceUuid);
  } catch (err) {
    if (err instanceof NotFoundError) {
      throw new Error(
        `Could not adopt instance ${instanceUuid}: it does not exist or belongs to another user. Check adoptInstanceUuid.`,
      );
    }
    throw err;
  }
  if (!matchesSpec(cloud, inputs)) {
    throw new Error(
      `Could not adopt instance ${instanceUuid}: it runs gpu ${cloud.gpu_uuid} x${cloud.gpu_nums} from image ${cloud.image_uuid}, ` +
        "which does not match gpuUuid, gpuNums and imageUuid in your program. Make them match the instance.",
    );
  }
  return converge(ctx, instanceUuid, { title: cloud.title }, inputs);
}

async function create(inputs: InstanceInputs): Promise<pulumi.dynamic.CreateResult> {
  const ctx = context();
  if (inputs.shutdownAt !== undefined) assertTimerAhead(inputs.shutdownAt);
  if (inputs.adoptInstanceUuid) {
    const cloud = await adopt(ctx, inputs, inputs.adoptInstanceUuid);
    return { id: cloud.instance_uuid, outs: outputs(inputs, cloud) };
  }
  const created = await createOnce(ctx, inputs);
  const instanceUuid = created.instance_uuid;
  try {
    const cloud = await converge(ctx, instanceUuid, { title: undefined }, inputs, created);
    return { id: instanceUuid, outs: outputs(inputs, cloud) };
  } catch (err) {
    return destroyAfterFailure(ctx, instanceUuid, err, inputs.waitTimeoutSeconds * 1000);
  }
}

/** The inputs among the stored outputs (outputs carry every input beside the cloud's fields). */
function inputsOf(props: Record<string, unknown>): InstanceInputs {
  return Object.fromEntries(
    Object.keys(InstanceInputsSchema.shape)
      .filter((k) => k in props)
      .map((k) => [k, props[k]]),
  ) as InstanceInputs;
}

async function read(id: string, props: Record<string, unknown>): Promise<pulumi.dynamic.ReadResult> {
  const inputs = inputsOf(props);
  let cloud: CloudInstance;
  try {
    cloud = await context().reads.info(id);
  } catch (err) {
    if (err instanceof NotFoundError) return { id: "", props: {} };
    throw err;
  }
  return { id, props: outputs(inputs, cloud), inputs: cloudInputs(inputs, cloud) };
}

async function update(
  id: string,
  olds: Record<string, unknown>,
  news: InstanceInputs,
): Promise<pulumi.dynamic.UpdateResult> {
  const cloud = await converge(context(), id, inputsOf(olds), news);
  return { outs: outputs(news, cloud) };
}

async function destroy(id: string, props: Record<string, unknown>): Promise<void> {
  const ctx = context();
  await ctx.api.instances.destroy(id);
  const timeoutMs = ((props.waitTimeoutSeconds as number | undefined) ?? 900) * 1000;
  try {
    await ctx.reads.waitUntilGone(id, { timeoutMs, pollIntervalMs: ctx.pollIntervalMs });
  } catch (err) {
    if (!(err instanceof TimeoutError)) throw err;
    throw new Error(
      `Could not delete instance ${id}: it is still listed ${timeoutMs / 1000} s after destroy (last seen: ${err.lastSeen}). Check it in the console.`,
    );
  }
}

export const instanceProvider: Required<pulumi.dynamic.ResourceProvider> = {
  async configure(req) {
    configure(req.config);
  },
  async check(_olds, news) {
    return checkInputs(InstanceInputsSchema, news, [
      exactlyOneOf<InstanceInputs>(["podUuid", "imageUuid"], "create from a pod or from an image"),
      podTagNeedsPod,
      timerNeedsRunning,
    ]) as { inputs: Record<string, unknown>; failures: CheckFailure[] };
  },
  async diff(id, olds, news) {
    // An absent title means the program leaves the title alone (DESIGN §3 is silent on clearing it).
    const wanted = news.title === undefined ? { ...news, title: olds.title } : news;
    const adoptsThis = news.adoptInstanceUuid === undefined || news.adoptInstanceUuid === id;
    return diffInputs(
      olds,
      adoptsThis ? { ...wanted, adoptInstanceUuid: olds.adoptInstanceUuid } : wanted,
      INSTANCE_DIFF,
    );
  },
  create: (inputs) => create(inputs as InstanceInputs),
  read,
  update: (id, olds, news) => update(id, olds, news as InstanceInputs),
  delete: destroy,
};

/** A GPU instance. `import` is not available to dynamic providers: adopt an existing one with `adoptInstanceUuid`. */
export class Instance extends pulumi.dynamic.Resource {
  declare readonly instanceUuid: pulumi.Output<string>;
  declare readonly status: pulumi.Output<number>;
  declare readonly statusName: pulumi.Output<string>;
  declare readonly title: pulumi.Output<string>;
  declare readonly running: pulumi.Output<boolean>;
  declare readonly serverUrls: pulumi.Output<string[]>;
  declare readonly services: pulumi.Output<ServiceOutput[]>;
  /** Secret: SSH password per ssh service, keyed by the service's title. */
  declare readonly sshPasswords: pulumi.Output<Record<string, string>>;
  declare readonly gpuUuid: pulumi.Output<string>;
  declare readonly gpuName: pulumi.Output<string | null>;
  declare readonly gpuNums: pulumi.Output<number>;
  declare readonly imageName: pulumi.Output<string | null>;
  declare readonly imageTag: pulumi.Output<string | null>;
  declare readonly createTime: pulumi.Output<number | null>;
  declare readonly startTime: pulumi.Output<number | null>;
  declare readonly chargingType: pulumi.Output<number | null>;
  declare readonly shutdownRegular: pulumi.Output<{ shutdownTime: number; enable: boolean } | null>;
  declare readonly shutdownAt: pulumi.Output<number | undefined>;

  constructor(name: string, args: InstanceArgs, opts?: pulumi.CustomResourceOptions) {
    const outs = {
      instanceUuid: undefined,
      status: undefined,
      statusName: undefined,
      title: undefined,
      running: undefined,
      gpuUuid: undefined,
      gpuNums: undefined,
      shutdownAt: undefined,
      serverUrls: undefined,
      services: undefined,
      sshPasswords: undefined,
      gpuName: undefined,
      imageName: undefined,
      imageTag: undefined,
      createTime: undefined,
      startTime: undefined,
      chargingType: undefined,
      shutdownRegular: undefined,
    };
    super(
      shimProvider("Instance"),
      name,
      { ...outs, ...args },
      withSecretOutputs(opts, ["sshPasswords"]),
      "gpucloud",
      "Instance",
    );
  }
}
