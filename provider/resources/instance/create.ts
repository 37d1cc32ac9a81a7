/**
 * The create path of Instance: make the instance (or adopt one), bring it to the wanted state, and
 * never leave a paid instance that the state does not know (DESIGN §3). Its one entry point is
 * createInstance; the definition only calls it.
 */
import {
  collect,
  NotFoundError,
  OutcomeUnknownError,
  retryUntil,
  type Instance as CloudInstance,
} from "../../../sdk";
import type { ProviderContext } from "../../framework/context";
import { serialised } from "../../framework/serialised";
import { converge } from "./converge";
import type { InstanceInputs } from "./inputs";
import { instanceReads } from "./reads";
import { assertTimerAhead } from "./timer";

/** Instances this provider process created, or found new after a lost answer: never "new" to a later create. */
const createdHere = new Set<string>();

/** Creates (or adopts) the instance `inputs` describe and brings it to their state; the cloud's record. */
export async function createInstance(ctx: ProviderContext, inputs: InstanceInputs): Promise<CloudInstance> {
  if (inputs.shutdownAt !== undefined) await assertTimerAhead(ctx, inputs.shutdownAt);
  if (inputs.adoptInstanceUuid) return adopt(ctx, inputs, inputs.adoptInstanceUuid);
  const created = await createOnce(ctx, inputs);
  try {
    return await converge(ctx, created.instance_uuid, { title: undefined }, inputs, created);
  } catch (err) {
    return destroyAfterFailure(ctx, created.instance_uuid, err, inputs.waitTimeoutSeconds * 1000);
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

async function adopt(
  ctx: ProviderContext,
  inputs: InstanceInputs,
  instanceUuid: string,
): Promise<CloudInstance> {
  let cloud: CloudInstance;
  try {
    cloud = await instanceReads(ctx.api).info(instanceUuid);
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
async function createOnce(ctx: ProviderContext, inputs: InstanceInputs): Promise<CloudInstance> {
  const { api } = ctx;
  const reads = instanceReads(api);
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

/** Keeps trying through transient failures until `timeoutMs` from now, pausing as waits poll. */
function untilDeadline(ctx: ProviderContext, timeoutMs: number) {
  return { deadline: Date.now() + timeoutMs, pauseMs: ctx.settings.pollIntervalMs };
}

/**
 * Every instance, for reconciling a create whose answer was lost: the listing goes on through transient
 * failures until `timeoutMs`, since giving up would leave an instance that may exist unknown to the state.
 */
async function listThroughOutage(
  ctx: ProviderContext,
  timeoutMs: number,
  lost: Error,
): Promise<CloudInstance[]> {
  try {
    return await retryUntil(() => collect(ctx.api.instances.listAll()), untilDeadline(ctx, timeoutMs));
  } catch (listErr) {
    throw new Error(
      `Could not create instance: the answer to the create call was lost (${lost.message}) and listing the instances ` +
        `to find out whether one was made failed too (${messageOf(listErr)}). ` +
        "List your instances and adopt (adoptInstanceUuid) or destroy any you do not recognise.",
    );
  }
}

/**
 * Destroys the instance a failed create made, going on through transient failures until `timeoutMs`:
 * the create failed, often because the cloud was unreachable, and giving up at once would leave a paid
 * instance the state never learns of (DESIGN §3).
 */
async function destroyAfterFailure(
  ctx: ProviderContext,
  instanceUuid: string,
  cause: unknown,
  timeoutMs: number,
): Promise<never> {
  const why = messageOf(cause);
  try {
    await retryUntil(() => ctx.api.instances.destroy(instanceUuid), untilDeadline(ctx, timeoutMs));
  } catch (destroyErr) {
    throw new Error(
      `Could not create instance: ${why} Destroying the half-created instance ${instanceUuid} also failed ` +
        `(${messageOf(destroyErr)}): destroy it in the console so it does not bill.`,
    );
  }
  throw new Error(
    `Could not create instance: ${why} The instance ${instanceUuid} was destroyed so nothing is left billing.`,
  );
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
