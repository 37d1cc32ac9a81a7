/** The Instance resource: a rented GPU instance (DESIGN §3). */
import { z } from "zod";
import {
  collect,
  GPU_NUMS,
  instanceStatusName,
  TimeoutError,
  TITLE_MAX,
  type Instance as CloudInstance,
} from "../../../sdk";
import { exactlyOneOf, isUnknown, type CrossFieldRule } from "../../framework/check";
import type { ProviderContext } from "../../framework/context";
import { defineResource, outputFields, type Inputs } from "../../framework/define-resource";
import { plainJson } from "../../framework/plain-json";
import { POWERED_ON, scheduledShutdown, services, sshPasswords } from "./cloud";
import { converge } from "./converge";
import { createInstance } from "./create";
import { instanceReads, instanceUnlessGone } from "./reads";

const uuid = (what: string) =>
  z.string({ error: `must be a string (${what})` }).min(1, `must not be empty (${what})`);

/** shutdownAt: Unix seconds, or an ISO 8601 time with a zone; stored as Unix seconds. */
const shutdownAt = z
  .union([z.number().int().positive(), z.iso.datetime({ offset: true })], {
    error:
      "must be Unix seconds (a positive integer) or an ISO 8601 time with a zone, e.g. 2026-01-02T03:04:05Z",
  })
  .transform((v) => (typeof v === "number" ? v : Math.floor(Date.parse(v) / 1000)))
  .pipe(z.number().int());

const InstanceInputs = z.object({
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
    .meta({ type: "integer" })
    .describe(`Number of GPUs: ${GPU_NUMS.join(", ")}.`),
  title: z
    .string({ error: "must be a string" })
    .refine((t) => [...t].length <= TITLE_MAX, {
      error: (i) => `must be at most ${TITLE_MAX} characters, got ${[...String(i.input)].length}`,
    })
    .optional()
    .describe(
      `Instance name, at most ${TITLE_MAX} characters. When absent the provider leaves the cloud's title alone.`,
    ),
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
export type InstanceInputs = Inputs<typeof InstanceInputs>;

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

const ServiceOutput = z
  .object({
    title: z.string().nullable().describe("The service's title."),
    url: z.string().nullable().describe("The service's address."),
    portType: z.string().nullable().describe("`http` or `ssh`."),
    protocol: z.string().nullable().describe("`tcp` or `udp`."),
    ssh: z
      .object({
        host: z.string().describe("SSH host."),
        port: z.number().int().describe("SSH port."),
        username: z.string().describe("SSH user; the password is in the instance's sshPasswords."),
      })
      .nullable()
      .describe("How to reach an ssh service; null for other services."),
  })
  .meta({ id: "ServiceOutput", description: "An exposed service of an instance (its server_map entry)." });

const field = outputFields<CloudInstance>();

const outputs = {
  instanceUuid: field(z.string().describe("The instance's uuid; also its id."), (c) => c.instance_uuid),
  status: field(z.number().int().describe("The cloud's numeric status (see statusName)."), (c) => c.status),
  statusName: field(z.string().describe("The status by name: running, stopped, ..."), (c) =>
    instanceStatusName(c.status),
  ),
  title: field(
    z.string().describe("The instance's name in the cloud; empty when it has none."),
    (c) => c.title ?? "",
  ),
  serverUrls: field(
    z.array(z.string()).describe("Addresses of the instance's web services."),
    (c) => c.server_url ?? [],
  ),
  services: field(z.array(ServiceOutput).describe("The instance's exposed services."), services),
  sshPasswords: field.secret(
    z
      .record(z.string(), z.string())
      .describe("SSH password of each ssh service, keyed by the service's title."),
    sshPasswords,
  ),
  gpuName: field(z.string().nullable().describe("GPU model name."), (c) => c.gpu_name ?? null),
  imageName: field(z.string().nullable().describe("Image name."), (c) => c.image_name ?? null),
  imageTag: field(z.string().nullable().describe("Image version tag."), (c) => c.image_tag ?? null),
  createTime: field(
    z.number().int().nullable().describe("When it was created, Unix seconds."),
    (c) => c.create_time ?? null,
  ),
  startTime: field(
    z.number().int().nullable().describe("When it last started, Unix seconds."),
    (c) => c.start_time ?? null,
  ),
  chargingType: field(
    z.number().int().nullable().describe("Billing type, as the cloud reports it."),
    (c) => c.charging_type ?? null,
  ),
  shutdownRegular: field(
    z
      .object({
        shutdownTime: z.number().int().describe("When, Unix seconds."),
        enable: z.boolean().describe("Whether it is set."),
      })
      .nullable()
      .describe("The scheduled shutdown as the cloud reports it."),
    (c) =>
      c.shutdown_regular
        ? { shutdownTime: c.shutdown_regular.shutdown_time, enable: c.shutdown_regular.enable }
        : null,
  ),
};

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

const state = (inputs: InstanceInputs, cloud: CloudInstance) => ({
  inputs: cloudInputs(inputs, cloud),
  cloud,
});

export const instance = defineResource({
  name: "Instance",
  description:
    "A GPU instance. Adopt an existing one with `adoptInstanceUuid` (dynamic providers cannot `import`).",
  inputs: InstanceInputs,
  outputs,
  diff: {
    replaceOnChanges: ["podUuid", "podTag", "imageUuid", "gpuUuid", "gpuNums", "adoptInstanceUuid"],
    // An absent title means the program leaves the title alone (DESIGN §3 is silent on clearing it).
    keepWhenUnset: ["title"],
    adoptsById: "adoptInstanceUuid",
  },
  checks: [
    exactlyOneOf<InstanceInputs>(["podUuid", "imageUuid"], "create from a pod or from an image"),
    podTagNeedsPod,
    timerNeedsRunning,
  ],
  async create(ctx, inputs) {
    const cloud = await createInstance(ctx, inputs);
    return { id: cloud.instance_uuid, ...state(inputs, cloud) };
  },
  async read(ctx, id, olds) {
    const cloud = await instanceUnlessGone(ctx.api, id);
    return cloud && state(olds, cloud);
  },
  async update(ctx, id, olds, news) {
    return state(news, await converge(ctx, id, olds, news));
  },
  async delete(ctx, id, olds) {
    await ctx.api.instances.destroy(id);
    const timeoutMs = (olds.waitTimeoutSeconds ?? 900) * 1000;
    try {
      await instanceReads(ctx.api).waitUntilGone(id, {
        timeoutMs,
        pollIntervalMs: ctx.settings.pollIntervalMs,
      });
    } catch (err) {
      if (!(err instanceof TimeoutError)) throw err;
      throw new Error(
        `Could not delete instance ${id}: it is still listed ${timeoutMs / 1000} s after destroy (last seen: ${err.lastSeen}). Check it in the console.`,
      );
    }
  },
  async import(ctx, id) {
    const cloud = await instanceUnlessGone(ctx.api, id);
    if (!cloud)
      throw new Error(`Could not import instance ${id}: it does not exist or belongs to another user.`);
    const inputs = InstanceInputs.parse({
      ...(await createdFrom(ctx, cloud)),
      gpuUuid: cloud.gpu_uuid,
      gpuNums: cloud.gpu_nums,
      title: cloud.title || undefined,
      running: POWERED_ON.includes(cloud.status),
      shutdownAt: scheduledShutdown(cloud),
    });
    return state(inputs, cloud);
  },
});

/** DESIGN §8: an instance whose image is a pod of the catalogue was created from that pod, any other from an image. */
async function createdFrom(
  ctx: ProviderContext,
  cloud: CloudInstance,
): Promise<Pick<InstanceInputs, "podUuid" | "podTag" | "imageUuid">> {
  const image = cloud.image_uuid;
  if (!image || !cloud.gpu_uuid || cloud.gpu_nums === undefined) {
    throw new Error(
      `Could not import instance ${cloud.instance_uuid}: the cloud does not report its image, GPU model or GPU count, ` +
        "so its inputs cannot be known. Adopt it with adoptInstanceUuid and the inputs of your program instead.",
    );
  }
  const pods = await collect(ctx.api.catalogue.podsAll());
  return pods.some((pod) => pod.uuid === image)
    ? { podUuid: image, podTag: cloud.image_tag }
    : { imageUuid: image };
}
