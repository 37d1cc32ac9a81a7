/**
 * The create path of Instance: make the instance (or adopt one), mark it as this stack's, bring it to
 * the wanted state, clean up, and never leave a paid instance that the state does not know, never make
 * two where one was declared, never take another owner's. Creates run in parallel; every instance made
 * carries its owner's mark right after the answer (lost-create/owner-mark.ts); a create whose answer is lost is
 * settled by the reconciler of its spec (lost-create/reconciler.ts), and one whose outcome stays unknown
 * is recorded in the state as a pending create (lost-create/pending-record.ts) that the next run
 * resolves. A lost call judged to have made nothing is watched once more at the end (the late watch:
 * lost-create/late-watch.ts), in case the cloud carried it out later than the recovery allows for.
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
import { isCancelled, messageOf } from "../../framework/errors";
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
import { onListedModel } from "./gpu-choices";
import { createOnFirstFreeModel } from "./gpu-fallback";
import type { InstanceInputs } from "./inputs";
import {
  markAnswered,
  newClaimantId,
  pendingCreateError,
  unresolvedError,
  releaseClaim,
  LateWatch,
  sendingAgain,
  statusReporter,
  openWindow,
  type Claimant,
} from "./lost-create";
import { cleanUpLateArrivals, discardLateArrivals, keepOneLateArrival } from "./late-arrivals";
import { instanceMemory, instanceReads, instanceTiming } from "./memory";
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
 * Makes, marks and converges an instance on the GPU model `inputs` name. `listed`: the listing before
 * another model's refused create (which made nothing) stands for the first create call of this one.
 */
async function createOnModel(
  ctx: ProviderContext,
  inputs: InstanceInputs,
  deadline: number,
  listed: boolean,
): Promise<CloudInstance> {
  const watch = new LateWatch(
    ctx,
    instanceMemory(ctx.process),
    specOf(inputs),
    lateWatchProgress(ctx, inputs),
  );
  try {
    const made = await makeMarkedInstance(ctx, inputs, deadline, watch, listed);
    const cloud = await convergeMade(ctx, inputs, made, deadline);
    if (watch.watching) await cleanUpLateArrivals(ctx, inputs, watch, cloud);
    return cloud;
  } catch (err) {
    if (watch.watching) await discardLateArrivals(ctx, inputs, watch);
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

/** The instance made, brought to what the inputs ask; what a failure on the way leaves is create-failures.ts's. */
async function convergeMade(
  ctx: ProviderContext,
  inputs: InstanceInputs,
  made: Made,
  deadline: number,
): Promise<CloudInstance> {
  const uuid = made.instance.instance_uuid;
  try {
    // The mark over a won claim's token is a rename, safe to send again: a lost answer is no failure.
    const retrying = { deadline, pauseMs: ctx.settings.pollIntervalMs, signal: ctx.signal };
    if (made.claimed) await retryUntil(() => releaseClaim(ctx, uuid, inputs.title), retrying);
    // Converging again is safe (it reads the instance afresh and does what is still missing), so it
    // rides out an outage until the create's deadline instead of destroying an instance made fine.
    let known: CloudInstance | undefined = made.instance;
    const olds = { title: inputs.title };
    return await retryUntil(
      () => converge(ctx, uuid, olds, inputs, known).finally(() => (known = undefined)),
      retrying,
    );
  } catch (err) {
    if (isUnfinishedPowerChange(err)) throw keptAfterUnsettledPower(inputs, made.instance, err);
    if (isCancelled(err, ctx.signal)) throw keptAfterCancel(inputs, made.instance, err);
    return destroyAfterFailure(ctx, inputs, made.instance, err);
  }
}

/**
 * An instance of the spec for this create that is this stack's: made by a create call and marked as
 * this resource's, or claimed. One that someone else titled before this create could mark it is theirs,
 * and another is made. One whose mark cannot be written yet goes to the engine at once, kept in the
 * stack; one whose title the cloud refuses is destroyed.
 */
async function makeMarkedInstance(
  ctx: ProviderContext,
  inputs: InstanceInputs,
  deadline: number,
  watch: LateWatch,
  listed: boolean,
): Promise<Made> {
  for (let round = 0; ; round++) {
    const made = await makeInstance(ctx, inputs, deadline, watch, listed && round === 0);
    if (made.answeredAt === undefined) return made;
    const mark = inputs.title ?? "";
    const marking = await markAnswered(
      ctx,
      made.instance,
      mark,
      made.answeredAt,
      deadline,
      instanceTiming(ctx),
    ).catch((err: unknown) => {
      if (isCancelled(err, ctx.signal)) throw keptAfterCancel(inputs, made.instance, err);
      throw keptUnmarked(inputs, made.instance, err);
    });
    if (marking.kind === "marked") return made;
    if (marking.kind === "unwritten")
      throw keptUnmarked(inputs, marking.seen ?? made.instance, marking.cause);
    if (marking.kind === "refused") {
      return destroyAfterFailure(
        ctx,
        inputs,
        made.instance,
        new Error(
          `the cloud refused its title ${JSON.stringify(mark)} (${messageOf(marking.cause)}), the mark that tells it is this stack's; fix title in your program.`,
        ),
      );
    }
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
 * instance it made is adopted, or, when nothing was made, the create is sent again within the deadline
 * and the call goes on being watched (`watch`): an instance it claims is taken instead of another call.
 */
async function makeInstance(
  ctx: ProviderContext,
  inputs: InstanceInputs,
  deadline: number,
  watch: LateWatch,
  listed: boolean,
): Promise<Made> {
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
  for (let round = 0; ; round++) {
    const late = watch.take();
    if (late) return { instance: late, claimed: true };
    const sent = await send(ctx, inputs, spec, deadline, listed && round === 0).catch((err: unknown) => {
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
    watch.watch(sent.claimant.window, sent.claimant.sentAt!);
    if (Date.now() < deadline) {
      sent.claimant.progress?.(sendingAgain());
    } else {
      const adopted = await keepOneLateArrival(ctx, inputs, watch);
      if (adopted) return { instance: adopted, claimed: true };
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
 * listings before the call showed. `listed`: a listing just before stands for the one before this call.
 */
async function send(
  ctx: ProviderContext,
  inputs: InstanceInputs,
  spec: CreateSpec,
  deadline: number,
  listed: boolean,
): Promise<Sent> {
  const memory = instanceMemory(ctx.process);
  const reads = memory.reads(ctx.api);
  const timing = instanceTiming(ctx);
  const until = { deadline, pauseMs: ctx.settings.pollIntervalMs, signal: ctx.signal };
  if (!listed) await retryUntil(() => reads.freshWalk(), until);
  return retryUntil(async ({ deadline: callDeadline }) => {
    // Taken as the call goes out: a walk that ends while it is out may already list the new instance.
    const window = openWindow(reads.newestCreateTime, reads.everListed);
    const sentAt = Date.now();
    try {
      // Never given the signal: a create cut off half way could make an instance nobody knows of. Once
      // sent it finishes (within its request timeout), and a lost answer is reconciled below.
      const instance = await createCall(ctx.api, spec, { deadline: callDeadline });
      memory.taken.mark(instance.instance_uuid);
      return { kind: "answered", instance, answeredAt: Date.now() };
    } catch (err) {
      if (!(err instanceof OutcomeUnknownError)) throw err;
      // From its send, on the model's T: a request timeout below the floor does not make the cloud faster.
      const settledAt = Math.max(Date.now() + timing.lateCommitMs, sentAt + timing.settledAfterSendMs);
      return {
        kind: "lost",
        lost: err,
        // A pending record is written only once the call has settled, whatever the deadline.
        claimant: {
          id: newClaimantId(),
          window,
          earlierRun: false,
          settledAt,
          sentAt,
          giveUpAt: Math.max(deadline, settledAt),
          progress: lostAnswerProgress(ctx, inputs, err),
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

/** The resource as progress names it: by its title (its mark), or its spec when it has none. */
function progressName(inputs: InstanceInputs): string {
  return inputs.title
    ? `instance ${JSON.stringify(inputs.title)}`
    : `an untitled instance of ${describeSpec(specOf(inputs))}`;
}

/**
 * What the person running `pulumi up` reads while a lost answer of this create is settled: said again
 * only when the status changes, not as its countdown runs.
 */
function lostAnswerProgress(
  ctx: ProviderContext,
  inputs: InstanceInputs,
  lost: Error,
): (status: string) => void {
  return statusReporter(
    ctx.progress,
    `Creating ${progressName(inputs)}: the answer to the create call was lost (${howLost(lost)}); `,
  );
}

/** What the person running `pulumi up` reads while the late watch of this create looks. */
function lateWatchProgress(ctx: ProviderContext, inputs: InstanceInputs): (status: string) => void {
  return statusReporter(ctx.progress, `Creating ${progressName(inputs)}: `);
}

/** How an answer was lost, in the SDK's words without its advice to SDK users ("the connection was dropped ..."). */
function howLost(lost: Error): string {
  return (
    /the request was sent but (.*?), so it may or may not have been carried out/.exec(lost.message)?.[1] ??
    lost.message
  );
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
