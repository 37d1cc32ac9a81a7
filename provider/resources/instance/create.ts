/**
 * The create path of Instance, in four steps: make an instance of the spec, mark it as this stack's,
 * bring it to the wanted state (converge.ts), clean up. It never leaves a paid instance that the state
 * does not know, never makes two where one was declared, never takes another owner's. Creates run in
 * parallel. What happens when a create's answer is lost is lost-create/'s, behind its door
 * (CreateRecovery): an earlier run's pending record of this resource is resolved first, a lost answer is
 * settled by the reconciler of the spec (the instance it made adopted, or the call sent again), an
 * outcome that stays unknown is recorded in the state as a pending create that the next run resolves,
 * and a call judged to have made nothing is watched until the create ends, in case the cloud carried it
 * out late. What a failure after an instance was made leaves behind is create-failures.ts's.
 */
import {
  NotFoundError,
  retryUntil,
  type CallOptions,
  type GpuCloudClient,
  type Instance as CloudInstance,
} from "../../../sdk";
import type { ProviderContext } from "../../framework/context";
import { isCancelled } from "../../framework/errors";
import { converge } from "./converge";
import { convergeDeadline, type ConvergeDeadline } from "./deadline";
import {
  destroyAfterFailure,
  keptAfterCancel,
  keptAfterUnsettledPower,
  keptUnmarked,
} from "./create-failures";
import { adoptionMismatches, specOf, type CreateSpec } from "./create-spec";
import { onListedModel } from "./gpu-choices";
import { createOnFirstFreeModel } from "./gpu-fallback";
import type { InstanceInputs } from "./inputs";
import { CreateRecovery, type Made } from "./lost-create";
import { instanceReads, instanceRecovery } from "./memory";
import { isUnfinishedPowerChange } from "./power";
import { assertTimerAhead } from "./timer";

/** Creates (or adopts) the instance `inputs` describe and brings it to their state; the cloud's record. */
export async function createInstance(ctx: ProviderContext, inputs: InstanceInputs): Promise<CloudInstance> {
  if (inputs.shutdownAt !== undefined) await assertTimerAhead(ctx, inputs.shutdownAt);
  if (inputs.adoptInstanceUuid) return adopt(ctx, inputs, inputs.adoptInstanceUuid);
  const deadline = Date.now() + inputs.waitTimeoutSeconds * 1000;
  return createOnFirstFreeModel(ctx, inputs, (onModel, listed) =>
    createOnModel(ctx, onModel, deadline, listed),
  );
}

/**
 * Makes, marks, converges and cleans up an instance on the GPU model `inputs` name. `listed`: the listing
 * before another model's refused create (which made nothing) stands for the first create call of this one.
 */
async function createOnModel(
  ctx: ProviderContext,
  inputs: InstanceInputs,
  deadline: number,
  listed: boolean,
): Promise<CloudInstance> {
  const spec = specOf(inputs);
  const recovery = new CreateRecovery(ctx, instanceRecovery(ctx.process), {
    spec,
    inputs,
    deadline,
    call: (options) => createCall(ctx.api, spec, options),
  });
  try {
    const { made, convergeBy } = await makeMarked(ctx, inputs, recovery, listed);
    const cloud = await convergeMade(ctx, inputs, recovery, made, deadline, convergeBy);
    await recovery.cleanUp(cloud);
    return cloud;
  } catch (err) {
    await recovery.cleanUpAfterFailure();
    throw err;
  }
}

async function adopt(
  ctx: ProviderContext,
  inputs: InstanceInputs,
  instanceUuid: string,
): Promise<CloudInstance> {
  let cloud: CloudInstance;
  try {
    cloud = await instanceReads(ctx).info(instanceUuid);
  } catch (err) {
    if (err instanceof NotFoundError) {
      throw new Error(
        `Could not adopt instance ${instanceUuid}: it does not exist or belongs to another user. Check adoptInstanceUuid.`,
        { cause: err },
      );
    }
    throw err;
  }
  const spec = specOf(onListedModel(inputs, cloud));
  const mismatches = adoptionMismatches(cloud, spec);
  if (mismatches.length > 0) {
    throw new Error(
      `Could not adopt instance ${instanceUuid}: ${mismatches.join("; ")}. ` +
        "Make your program match the instance, or adopt another one.",
    );
  }
  const recovery = instanceRecovery(ctx.process);
  recovery.taken.mark(instanceUuid);
  recovery.records.resolveByAdoption(spec, inputs.title, cloud);
  return converge(ctx, instanceUuid, { title: cloud.title }, inputs);
}

/**
 * Make and mark until the instance made is this stack's: one someone else titled first is theirs, and
 * another is made. One whose mark cannot be written yet goes to the engine at once, kept in the stack;
 * one whose title the cloud refuses is destroyed.
 */
async function makeMarked(
  ctx: ProviderContext,
  inputs: InstanceInputs,
  recovery: CreateRecovery<InstanceInputs>,
  listed: boolean,
): Promise<{ made: Made; convergeBy: ConvergeDeadline }> {
  for (let round = 0; ; round++) {
    const made = await recovery.make(listed && round === 0);
    // Taken before the mark: the cloud's clock as the instance was made, not as its mark lands.
    const convergeBy = convergeDeadline(ctx, inputs);
    const marking = await recovery.mark(made);
    if (marking.kind === "ours") return { made, convergeBy };
    if (marking.kind === "unwritten") {
      const { seen, cause } = marking;
      throw isCancelled(cause, ctx.signal)
        ? keptAfterCancel(inputs, seen, cause)
        : keptUnmarked(inputs, seen, cause);
    }
    if (marking.kind === "refused") return destroyAfterFailure(ctx, inputs, made.instance, marking.why);
  }
}

/** The instance made, brought to what the inputs ask; what a failure on the way leaves is create-failures.ts's. */
async function convergeMade(
  ctx: ProviderContext,
  inputs: InstanceInputs,
  recovery: CreateRecovery<InstanceInputs>,
  made: Made,
  deadline: number,
  convergeBy: ConvergeDeadline,
): Promise<CloudInstance> {
  const uuid = made.instance.instance_uuid;
  try {
    await recovery.release(made);
    // Converging again is safe (it reads the instance afresh and does what is still missing), so it
    // rides out an outage until the create's deadline instead of destroying an instance made fine.
    let known: CloudInstance | undefined = made.instance;
    const olds = { title: inputs.title };
    return await retryUntil(
      () => converge(ctx, uuid, olds, inputs, known, convergeBy).finally(() => (known = undefined)),
      { deadline, pauseMs: ctx.settings.pollIntervalMs, signal: ctx.signal },
    );
  } catch (err) {
    if (isUnfinishedPowerChange(err)) throw keptAfterUnsettledPower(inputs, made.instance, err);
    if (isCancelled(err, ctx.signal)) throw keptAfterCancel(inputs, made.instance, err);
    return destroyAfterFailure(ctx, inputs, made.instance, err);
  }
}

/** The create call of the spec: create_by_image, or create_by_pod. */
function createCall(api: GpuCloudClient, spec: CreateSpec, call: CallOptions): Promise<CloudInstance> {
  const gpu = { gpu_uuid: spec.gpuUuid, gpu_nums: spec.gpuNums };
  return spec.imageUuid !== undefined
    ? api.instances.createByImage({ image_uuid: spec.imageUuid, ...gpu }, call)
    : api.instances.createByPod({ pod_uuid: spec.podUuid!, pod_tag: spec.podTag, ...gpu }, call);
}
