/** The Instance resource: a rented GPU instance (docs/design/contracts.md#instance). */
import { z } from "zod";
import {
  collect,
  instanceStatusName,
  TimeoutError,
  TITLE_MAX,
  type Instance as CloudInstance,
} from "../../../sdk";
import { parsedOrExplained } from "../../framework/check";
import type { ProviderContext } from "../../framework/context";
import { defineResource, outputFields } from "../../framework/define-resource";
import { isCancelled } from "../../framework/errors";
import { plainJson } from "../../framework/plain-json";
import { POWERED_ON, services, shutdownAtInput, sshPasswords } from "./cloud";
import { converge } from "./converge";
import { createInstance } from "./create";
import { catalogueFailures, declaredModel } from "./gpu-choices";
import { InstanceInputs } from "./inputs";
import { isPendingId, PENDING_OUTPUT, PendingCreate, deletePending, readPending } from "./lost-create";
import { instanceReads, instanceRecovery } from "./memory";

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
/** What the instance is and was made of: an in-place update never changes it. */
const STABLE = { stable: true } as const;

const outputs = {
  instanceUuid: field(z.string().describe("The instance's uuid; also its id."), "instance_uuid", STABLE),
  status: field(z.number().int().describe("The cloud's numeric status (see statusName)."), "status"),
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
  // Not stable, as runningGpuUuid: a start with fallbackGpuUuids may move the instance to another model.
  gpuName: field(z.string().nullable().describe("GPU model name."), "gpu_name"),
  runningGpuUuid: field(
    z
      .string()
      .nullable()
      .describe(
        "The GPU model the instance runs on: gpuUuid, or the one of fallbackGpuUuids the cloud had cards of.",
      ),
    "gpu_uuid",
  ),
  imageName: field(z.string().nullable().describe("Image name."), "image_name", STABLE),
  imageTag: field(z.string().nullable().describe("Image version tag."), "image_tag", STABLE),
  createTime: field(
    z.number().int().nullable().describe("When it was created, Unix seconds."),
    "create_time",
    STABLE,
  ),
  startTime: field(z.number().int().nullable().describe("When it last started, Unix seconds."), "start_time"),
  chargingType: field(
    z.number().int().nullable().describe("Billing type, as the cloud reports it."),
    "charging_type",
    STABLE,
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
  [PENDING_OUTPUT]: field(
    PendingCreate.nullable().describe(
      "Set only while the create's outcome is unknown (its id is then `pending-create:...`); null for an instance.",
    ),
    () => null,
  ),
};

/**
 * The inputs as the cloud has them now: refresh rebuilds these so drift shows and nothing else does. A
 * title changed in the console shows as a change of the input: a declared title is put back by the next
 * `up`, and an autonamed one keeps its new name (still a mark). A title cleared (by a person, or a mark
 * that could not be written yet) keeps the stack's mark as the input while the title output shows it
 * missing: that is drift, and the next `up` writes the same mark back, never a new name and never none.
 */
function cloudInputs(inputs: InstanceInputs, cloud: CloudInstance): InstanceInputs {
  return plainJson({
    ...inputs,
    title: cloud.title ? cloud.title : inputs.title,
    running: POWERED_ON.includes(cloud.status),
    shutdownAt: shutdownAtInput(cloud),
    gpuUuid: declaredModel(inputs, cloud),
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
  id:
    "the instance's uuid (its instanceUuid); while a create's outcome is unknown, `pending-create:<time>:<8 hex>` " +
    "until the next up, refresh or destroy resolves it",
  example: [
    'const gpu = await gpucloud.getGpu({ name: "4090D" });',
    'const pod = await gpucloud.getPod({ title: "ComfyUI" });',
    'const worker = new gpucloud.Instance("worker", {',
    "  podUuid: pod.podUuid,",
    "  gpuUuid: gpu.gpuUuid,",
    "  gpuNums: 1,",
    "  // Ready only once its web services answer.",
    "  waitForServices: true,",
    "});",
    "return { serviceUrls: worker.serverUrls, sshPasswords: worker.sshPasswords };",
  ],
  inputs: InstanceInputs,
  outputs,
  autoname: { input: "title", maxLength: TITLE_MAX },
  remade: { when: isPendingId, output: PENDING_OUTPUT },
  cloudChecks: catalogueFailures,
  async create(ctx, inputs) {
    const cloud = await createInstance(ctx, inputs);
    return { id: cloud.instance_uuid, ...state(inputs, cloud) };
  },
  diffed(process, id, stored) {
    const recovery = instanceRecovery(process);
    if (isPendingId(id)) recovery.records.register(id, stored);
    else recovery.taken.mark(id);
  },
  async read(ctx, id, olds, stored) {
    if (isPendingId(id)) {
      const made = await readPending(ctx, instanceRecovery(ctx.process), id, olds, stored);
      // A record written before resources had marks has no title: the claim token it keeps is its mark.
      return made && { id: made.instance_uuid, ...state({ ...olds, title: olds.title ?? made.title }, made) };
    }
    instanceRecovery(ctx.process).taken.mark(id);
    const cloud = await instanceReads(ctx).unlessGone(id);
    return cloud && state(olds, cloud);
  },
  async update(ctx, id, olds, news) {
    if (isPendingId(id))
      throw new Error(
        `Could not update ${id}: its create is pending. Run \`pulumi refresh\` or \`pulumi up\` to resolve it.`,
      );
    try {
      return state(news, await converge(ctx, id, olds, news));
    } catch (err) {
      if (!isCancelled(err, ctx.signal)) throw err;
      throw new Error(
        `Could not update instance ${id}: ${err.message}. What was already sent to the cloud stays done and nothing was undone; ` +
          "run `pulumi refresh` to see the instance as it is, then `pulumi up` to finish the update.",
        { cause: err },
      );
    }
  },
  async delete(ctx, id, olds, stored): Promise<void> {
    if (isPendingId(id))
      return deletePending(ctx, instanceRecovery(ctx.process), id, olds, stored, (uuid): Promise<void> =>
        instance.delete(ctx, uuid, olds, {}),
      );
    instanceRecovery(ctx.process).taken.mark(id);
    // Never given the signal: once sent, the destroy call finishes and its answer is known.
    await ctx.api.instances.destroy(id);
    const timeoutMs = (olds.waitTimeoutSeconds ?? 900) * 1000;
    try {
      await instanceReads(ctx).waitUntilGone(id, {
        timeoutMs,
        pollIntervalMs: ctx.settings.pollIntervalMs,
        signal: ctx.signal,
      });
    } catch (err) {
      if (isCancelled(err, ctx.signal)) {
        throw new Error(
          `Could not delete instance ${id}: the destroy call was sent and accepted, then ${err.message}. ` +
            "The cloud goes on destroying it; the stack keeps it until a `pulumi destroy` or `pulumi up` sees it gone.",
          { cause: err },
        );
      }
      if (!(err instanceof TimeoutError)) throw err;
      throw new Error(
        `Could not delete instance ${id}: it is still listed ${timeoutMs / 1000} s after destroy (last seen: ${err.lastSeen}). Check it in the console.`,
        { cause: err },
      );
    }
  },
  async import(ctx, id) {
    const cloud = await instanceReads(ctx).unlessGone(id);
    if (!cloud)
      throw new Error(`Could not import instance ${id}: it does not exist or belongs to another user.`);
    const inputs = parsedOrExplained(
      InstanceInputs,
      {
        ...(await createdFrom(ctx, cloud)),
        gpuUuid: cloud.gpu_uuid,
        gpuNums: cloud.gpu_nums,
        // An untitled instance imports with an explicitly empty title, so Check and Diff of the imported
        // inputs show no change; left out of the program, the next up gives it its owner's mark.
        title: cloud.title ?? "",
        running: POWERED_ON.includes(cloud.status),
        shutdownAt: shutdownAtInput(cloud),
      },
      (problems) =>
        `Could not import instance ${id}: the cloud reports values the Instance resource does not accept ` +
        `(${problems}), so it cannot be imported as is. Adopt it with adoptInstanceUuid and valid inputs instead, ` +
        "or change it in the console first.",
    );
    return state(inputs, cloud);
  },
});

/**
 * An instance whose image is a pod of the catalogue was created from that pod, any other from an image
 * (docs/design/contracts.md#the-native-plugin).
 */
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
