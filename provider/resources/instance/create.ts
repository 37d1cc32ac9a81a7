/**
 * The create path of Instance: make the instance (or adopt one), mark it as this stack's, bring it to
 * the wanted state, and never leave a paid instance that the state does not know, never make two where
 * one was declared, never take another owner's. Creates run in parallel; every instance made carries its
 * owner's mark right after the answer (owner-mark.ts); a create whose answer is lost is settled by the
 * reconciler of its spec (lost-create/reconciler.ts), and one whose outcome stays unknown is recorded in
 * the state as a pending create (lost-create/pending-record.ts) that the next run resolves.
 */
import {
  NotFoundError,
  OutcomeUnknownError,
  retryUntil,
  type CallOptions,
  type GpuCloudClient,
  type Instance as CloudInstance,
} from "../../../sdk";
import { untilAborted } from "../../../sdk/sleep";
import { warn, type ProviderContext } from "../../framework/context";
import { isCancelled } from "../../framework/errors";
import { converge } from "./converge";
import {
  cancelledError,
  destroyAfterFailure,
  keptAfterCancel,
  keptAfterUnsettledPower,
  keptUnmarked,
  refusedForLong,
} from "./create-failures";
import { adoptionMismatches, describeSpec, specOf, type CreateSpec } from "./create-spec";
import type { InstanceInputs } from "./inputs";
import { newClaimantId } from "./lost-create/claim";
import { pendingCreateError, unresolvedError } from "./lost-create/pending-record";
import { releaseClaim } from "./lost-create/pending-resolution";
import type { Claimant } from "./lost-create/reconciler";
import { recoveryTiming } from "./lost-create/timing";
import { openWindow } from "./lost-create/window";
import { markAnswered } from "./owner-mark";
import { instanceMemory, instanceReads } from "./memory";
import { isUnfinishedPowerChange } from "./power";
import { assertTimerAhead } from "./timer";

/** Creates (or adopts) the instance `inputs` describe and brings it to their state; the cloud's record. */
export async function createInstance(ctx: ProviderContext, inputs: InstanceInputs): Promise<CloudInstance> {
  if (inputs.shutdownAt !== undefined) await assertTimerAhead(ctx, inputs.shutdownAt);
  if (inputs.adoptInstanceUuid) return adopt(ctx, inputs, inputs.adoptInstanceUuid);
  const deadline = Date.now() + inputs.waitTimeoutSeconds * 1000;
  const made = await makeMarkedInstance(ctx, inputs, deadline);
  const uuid = made.instance.instance_uuid;
  try {
    if (made.claimed) await releaseClaim(ctx, uuid, inputs.title);
    // Converging again is safe (it reads the instance afresh and does what is still missing), so it
    // rides out an outage until the create's deadline instead of destroying an instance made fine.
    let known: CloudInstance | undefined = made.instance;
    const olds = { title: inputs.title };
    return await retryUntil(
      () => converge(ctx, uuid, olds, inputs, known).finally(() => (known = undefined)),
      { deadline, pauseMs: ctx.settings.pollIntervalMs, signal: ctx.signal },
    );
  } catch (err) {
    if (isUnfinishedPowerChange(err)) throw keptAfterUnsettledPower(inputs, made.instance, err);
    if (isCancelled(err, ctx.signal)) throw keptAfterCancel(inputs, made.instance, err);
    return destroyAfterFailure(ctx, inputs, made.instance, err);
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
  const spec = specOf(inputs);
  const mismatches = adoptionMismatches(cloud, spec);
  if (mismatches.length > 0) {
    throw new Error(
      `Could not adopt instance ${instanceUuid}: ${mismatches.join("; ")}. ` +
        "Make your program match the instance, or adopt another one.",
    );
  }
  const memory = instanceMemory(ctx.process);
  memory.taken.mark(instanceUuid);
  memory.records.resolveByAdoption(spec, inputs.title, cloud);
  return converge(ctx, instanceUuid, { title: cloud.title }, inputs);
}

interface Made {
  instance: CloudInstance;
  /** Adopted after a lost answer: it bears a claim token until it takes its mark. */
  claimed: boolean;
  /** When the create call answered with it (epoch ms); undefined for a claimed one. */
  answeredAt?: number;
}

/**
 * An instance of the spec for this create that is this stack's: made by a create call and marked as
 * this resource's, or claimed. One that someone else titled or claimed before this create could mark it
 * is theirs, and another is made.
 */
async function makeMarkedInstance(
  ctx: ProviderContext,
  inputs: InstanceInputs,
  deadline: number,
): Promise<Made> {
  for (;;) {
    const made = await makeInstance(ctx, inputs, deadline);
    if (made.answeredAt === undefined) return made;
    const marking = await markAnswered(
      ctx,
      made.instance,
      inputs.title ?? "",
      made.answeredAt,
      deadline,
    ).catch((err: unknown) => {
      if (isCancelled(err, ctx.signal)) throw keptAfterCancel(inputs, made.instance, err);
      throw keptUnmarked(inputs, made.instance, err);
    });
    if (marking.kind === "marked") return made;
    warn(
      `Instance ${made.instance.instance_uuid}, made by a create of ${describeSpec(specOf(inputs))}, is not this stack's: ${marking.why}. ` +
        "This create makes another.",
    );
    if (Date.now() >= deadline) {
      throw new Error(
        `Could not create instance: the instance ${made.instance.instance_uuid} it made was taken before it could be titled (${marking.why}), ` +
          `and waitTimeoutSeconds (${inputs.waitTimeoutSeconds}) had passed, so no other was made. Run the update again.`,
      );
    }
  }
}

/**
 * An instance of the spec for this create: the one a pending record of this resource made in an earlier
 * run (when Diff registered one), else a new one. A lost answer is settled by the spec's reconciler: the
 * instance it made is adopted, or, when nothing was made, the create is sent again within the deadline.
 */
async function makeInstance(ctx: ProviderContext, inputs: InstanceInputs, deadline: number): Promise<Made> {
  const spec = specOf(inputs);
  const memory = instanceMemory(ctx.process);
  const { records } = memory;
  const record = records.take(spec, inputs.title);
  if (record) {
    const outcome = await unlessCancelled(ctx, records.resolve(ctx, record, deadline), () => {
      records.returned(record);
      throw cancelledError(
        `while resolving the pending create ${record.id} of an earlier run, before any create call was sent; ` +
          "the stack still records it, and the next `pulumi up`, `pulumi refresh` or `pulumi destroy` resolves it",
      );
    });
    if (outcome.kind === "unknown") {
      records.returned(record);
      throw unresolvedError(record, outcome);
    }
    records.settled(record);
    if (outcome.kind === "adopted") return { instance: outcome.instance, claimed: true };
  }
  for (;;) {
    const sent = await send(ctx, spec, deadline).catch((err: unknown) => {
      if (isCancelled(err, ctx.signal))
        throw cancelledError("before the create call was sent, so no instance was made");
      throw refusedForLong(err) ?? err;
    });
    if (sent.kind === "answered")
      return { instance: sent.instance, claimed: false, answeredAt: sent.answeredAt };
    // Cancelled while the lost answer is settled: the outcome is left unknown, and recorded below.
    const reconciler = memory.reconciler(ctx, spec);
    const outcome = await unlessCancelled(ctx, reconciler.settle(sent.claimant), () =>
      reconciler.abandon(
        sent.claimant,
        "the operation was cancelled before the instance list could tell whether the create made an instance",
      ),
    );
    if (outcome.kind === "adopted") return { instance: outcome.instance, claimed: true };
    if (outcome.kind === "unknown") throw pendingCreateError(inputs, spec, sent.claimant, outcome);
    if (Date.now() >= deadline) {
      const nearMisses = outcome.nearMisses.map((miss) => ` (${miss})`).join("");
      throw new Error(
        `Could not create instance: the answer to the create call was lost (${sent.lost.message}) and no instance of ` +
          `${describeSpec(spec)} appeared${nearMisses}, so none was made; it was not sent again because waitTimeoutSeconds ` +
          `(${inputs.waitTimeoutSeconds}) had passed. Run the update again.`,
      );
    }
  }
}

type Sent =
  | { kind: "answered"; instance: CloudInstance; answeredAt: number }
  | { kind: "lost"; claimant: Claimant; lost: OutcomeUnknownError };

/**
 * One create call, after a listing (both ride out an outage until the deadline). A failure that proves
 * the call did no work (not sent, 429, 503: the SDK's transient errors of an unsafe call) sends it
 * again; a lost answer returns the claimant its reconciliation needs, its window opened by what the
 * listings before the call showed.
 */
async function send(ctx: ProviderContext, spec: CreateSpec, deadline: number): Promise<Sent> {
  const memory = instanceMemory(ctx.process);
  const reads = memory.reads(ctx.api);
  const timing = recoveryTiming(ctx.settings);
  const until = { deadline, pauseMs: ctx.settings.pollIntervalMs, signal: ctx.signal };
  await retryUntil(() => reads.freshWalk(), until);
  return retryUntil(async ({ deadline: callDeadline }) => {
    // Taken as the call goes out: a walk that ends while it is out may already list the new instance.
    const window = openWindow(reads.newestCreateTime, reads.everListed);
    try {
      // Never given the signal: a create cut off half way could make an instance nobody knows of. Once
      // sent it finishes (within its request timeout), and a lost answer is reconciled below.
      const instance = await createCall(ctx.api, spec, { deadline: callDeadline });
      memory.taken.mark(instance.instance_uuid);
      return { kind: "answered", instance, answeredAt: Date.now() };
    } catch (err) {
      if (!(err instanceof OutcomeUnknownError)) throw err;
      const settledAt = Date.now() + timing.lateCommitMs;
      return {
        kind: "lost",
        lost: err,
        // A pending record is written only once the call has settled, whatever the deadline.
        claimant: {
          id: newClaimantId(),
          window,
          earlierRun: false,
          settledAt,
          giveUpAt: Math.max(deadline, settledAt),
        },
      };
    }
  }, until);
}

function createCall(api: GpuCloudClient, spec: CreateSpec, call: CallOptions): Promise<CloudInstance> {
  const gpu = { gpu_uuid: spec.gpuUuid, gpu_nums: spec.gpuNums };
  return spec.imageUuid !== undefined
    ? api.instances.createByImage({ image_uuid: spec.imageUuid, ...gpu }, call)
    : api.instances.createByPod({ pod_uuid: spec.podUuid!, pod_tag: spec.podTag, ...gpu }, call);
}

/**
 * `work`, or, once the operation is cancelled (the engine's Cancel), what `onCancel` makes of it (a
 * value to go on with, or a thrown error): the work itself may go on in the background, shared with
 * other creates of this process.
 */
function unlessCancelled<T>(ctx: ProviderContext, work: Promise<T>, onCancel: () => T): Promise<T> {
  const { signal } = ctx;
  if (!signal) return work;
  return untilAborted(work, signal).catch((err: unknown) => {
    if (signal.aborted && err === signal.reason) return onCancel();
    throw err;
  });
}
