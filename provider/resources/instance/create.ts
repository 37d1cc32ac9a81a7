/**
 * The create path of Instance: make the instance (or adopt one), bring it to the wanted state, and never
 * leave a paid instance that the state does not know, never make two where one was declared, never take
 * another owner's (DESIGN §3). Creates run in parallel; a create whose answer is lost is settled by the
 * reconciler of its spec (reconciler.ts), and one whose outcome stays unknown is recorded in the state as
 * a pending create (pending-record.ts) that the next run resolves (pending-resolution.ts).
 */
import {
  NotFoundError,
  OutcomeUnknownError,
  RateLimitError,
  retryUntil,
  type CallOptions,
  type GpuCloudClient,
  type Instance as CloudInstance,
} from "../../../sdk";
import { formatWait } from "../../../sdk/answers";
import { untilAborted } from "../../../sdk/sleep";
import type { ProviderContext } from "../../framework/context";
import { isCancelled, messageOf, ResourceInitError } from "../../framework/errors";
import { converge } from "./converge";
import { adoptionMismatches, describeSpec, specOf, type CreateSpec } from "./create-spec";
import type { InstanceInputs } from "./inputs";
import { pendingCreateError, unresolvedError } from "./pending-record";
import { NEXT_STEP, PowerChangeUnsettledError } from "./power";
import { releaseClaim, resolveByAdoption, resolveRecord, takeRecord } from "./pending-resolution";
import { instanceReads } from "./reads";
import { createTiming, newClaimantId, reconcilerFor, type Claimant } from "./reconciler";
import { markTaken } from "./taken";
import { assertTimerAhead } from "./timer";

/** Creates (or adopts) the instance `inputs` describe and brings it to their state; the cloud's record. */
export async function createInstance(ctx: ProviderContext, inputs: InstanceInputs): Promise<CloudInstance> {
  if (inputs.shutdownAt !== undefined) await assertTimerAhead(ctx, inputs.shutdownAt);
  if (inputs.adoptInstanceUuid) return adopt(ctx, inputs, inputs.adoptInstanceUuid);
  const deadline = Date.now() + inputs.waitTimeoutSeconds * 1000;
  const made = await makeInstance(ctx, inputs, deadline);
  const uuid = made.instance.instance_uuid;
  try {
    if (made.claimed) await releaseClaim(ctx, uuid, inputs.title);
    // Converging again is safe (it reads the instance afresh and does what is still missing), so it
    // rides out an outage until the create's deadline instead of destroying an instance made fine.
    let known: CloudInstance | undefined = made.instance;
    const olds = { title: made.claimed ? inputs.title : undefined };
    return await retryUntil(
      () => converge(ctx, uuid, olds, inputs, known).finally(() => (known = undefined)),
      { deadline, pauseMs: ctx.settings.pollIntervalMs, signal: ctx.signal },
    );
  } catch (err) {
    if (err instanceof PowerChangeUnsettledError) throw keptAfterUnsettledPower(inputs, made.instance, err);
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
    cloud = await instanceReads(ctx.api).info(instanceUuid);
  } catch (err) {
    if (err instanceof NotFoundError) {
      throw new Error(
        `Could not adopt instance ${instanceUuid}: it does not exist or belongs to another user. Check adoptInstanceUuid.`,
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
  markTaken(instanceUuid);
  resolveByAdoption(spec, cloud);
  return converge(ctx, instanceUuid, { title: cloud.title }, inputs);
}

interface Made {
  instance: CloudInstance;
  /** Adopted after a lost answer: it bears a claim token until its title is set. */
  claimed: boolean;
}

/**
 * An instance of the spec for this create: the one a pending record of an earlier run made (when Diff
 * registered one of this spec), else a new one. A lost answer is settled by the spec's reconciler: the
 * instance it made is adopted, or, when nothing was made, the create is sent again within the deadline.
 */
async function makeInstance(ctx: ProviderContext, inputs: InstanceInputs, deadline: number): Promise<Made> {
  const spec = specOf(inputs);
  const record = takeRecord(spec);
  if (record) {
    const outcome = await unlessCancelled(ctx, resolveRecord(ctx, record, deadline), () => {
      throw cancelledError(
        `while resolving the pending create ${record.id} of an earlier run, before any create call was sent; ` +
          "the stack still records it, and the next `pulumi up`, `pulumi refresh` or `pulumi destroy` resolves it",
      );
    });
    if (outcome.kind === "adopted") return { instance: outcome.instance, claimed: true };
    if (outcome.kind === "unknown") throw unresolvedError(record, outcome);
  }
  for (;;) {
    const sent = await send(ctx, spec, deadline).catch((err: unknown) => {
      if (isCancelled(err, ctx.signal))
        throw cancelledError("before the create call was sent, so no instance was made");
      throw refusedForLong(err) ?? err;
    });
    if (sent.kind === "answered") return { instance: sent.instance, claimed: false };
    // Cancelled while the lost answer is settled: the outcome is left unknown, and recorded below.
    const reconciler = reconcilerFor(ctx, spec);
    const outcome = await unlessCancelled(ctx, reconciler.settle(sent.claimant), () =>
      reconciler.abandon(
        sent.claimant,
        "the operation was cancelled before the instance list could tell whether the create made an instance",
      ),
    );
    if (outcome.kind === "adopted") return { instance: outcome.instance, claimed: true };
    if (outcome.kind === "unknown") {
      const windowEnd = windowEndAfter(ctx.api, sent.lostAt + createTiming(ctx.settings).settleMs);
      throw pendingCreateError(inputs, spec, sent.claimant, windowEnd, outcome);
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `Could not create instance: the answer to the create call was lost (${sent.lost.message}) and no instance of ` +
          `${describeSpec(spec)} appeared, so none was made; it was not sent again because waitTimeoutSeconds ` +
          `(${inputs.waitTimeoutSeconds}) had passed. Run the update again.`,
      );
    }
  }
}

type Sent =
  | { kind: "answered"; instance: CloudInstance }
  | { kind: "lost"; claimant: Claimant; lost: OutcomeUnknownError; lostAt: number };

/**
 * One create call, after a listing (both ride out an outage until the deadline). A failure that proves
 * the call did no work (not sent, 429, 503: the SDK's transient errors of an unsafe call) sends it
 * again; a lost answer returns the claimant its reconciliation needs.
 */
async function send(ctx: ProviderContext, spec: CreateSpec, deadline: number): Promise<Sent> {
  const reads = instanceReads(ctx.api);
  const timing = createTiming(ctx.settings);
  const until = { deadline, pauseMs: ctx.settings.pollIntervalMs, signal: ctx.signal };
  await retryUntil(() => reads.freshWalk(), until);
  return retryUntil(async ({ deadline: callDeadline }) => {
    // Taken as the call goes out: a walk that ends while it is out may already list the new instance.
    const listedBefore = new Set(reads.everListed);
    const windowStart = cloudSeconds(reads.lastWalkCloudMs) - 1;
    try {
      // Never given the signal: a create cut off half way could make an instance nobody knows of. Once
      // sent it finishes (within its request timeout), and a lost answer is reconciled below.
      const instance = await createCall(ctx.api, spec, { deadline: callDeadline });
      markTaken(instance.instance_uuid);
      return { kind: "answered", instance };
    } catch (err) {
      if (!(err instanceof OutcomeUnknownError)) throw err;
      const lostAt = Date.now();
      return {
        kind: "lost",
        lost: err,
        lostAt,
        claimant: {
          id: newClaimantId(),
          windowStart,
          listedBefore,
          earlierRun: false,
          notMadeAfter: lostAt + timing.settleMs + timing.quietMs,
          // A pending record is written only once a late commit would have shown (its window ends then).
          giveUpAt: Math.max(deadline, lostAt + timing.settleMs),
        },
      };
    }
  }, until);
}

/**
 * A 429 whose Retry-After outlasts what the create may wait, in the provider's words: the SDK's text
 * advises raising a client option that a provider user does not have.
 */
function refusedForLong(err: unknown): Error | undefined {
  if (!(err instanceof RateLimitError) || !err.tooLongToWait || err.retryAfterMs === undefined)
    return undefined;
  return new Error(
    `Could not create instance: the cloud refused the create call with a rate limit (HTTP 429) and asked to wait ${formatWait(err.retryAfterMs)}, ` +
      "longer than this create may wait, so it was not sent again and no instance was made. " +
      "Run the update again after that time; fewer creates at once (`pulumi up --parallel N`) ask less of the limit.",
  );
}

function createCall(api: GpuCloudClient, spec: CreateSpec, call: CallOptions): Promise<CloudInstance> {
  const gpu = { gpu_uuid: spec.gpuUuid, gpu_nums: spec.gpuNums };
  return spec.imageUuid !== undefined
    ? api.instances.createByImage({ image_uuid: spec.imageUuid, ...gpu }, call)
    : api.instances.createByPod({ pod_uuid: spec.podUuid!, pod_tag: spec.podTag, ...gpu }, call);
}

/**
 * Cloud Unix seconds from a reading of the cloud's clock. Without one (a cloud that sends no Date), the
 * local clock less a minute for skew.
 */
function cloudSeconds(cloudMs: number | undefined): number {
  return Math.floor((cloudMs ?? Date.now() - 60_000) / 1000);
}

/**
 * The end of a pending record's window, on the cloud's clock: now, or when the settle time of the lost
 * answer ends (`settleEndsAt`, epoch ms) if the record is written sooner, plus the Date header's second.
 */
function windowEndAfter(api: GpuCloudClient, settleEndsAt: number): number {
  const now = Date.now();
  const cloudNow = api.cloudNow() ?? now + 60_000;
  return Math.ceil((cloudNow + Math.max(0, settleEndsAt - now)) / 1000) + 1;
}

/**
 * How long the destroy of a failed create keeps trying through transient failures: the create failed,
 * often because the cloud was unreachable, and giving up at once would leave a paid instance; but once
 * it gives up the state keeps the instance (below), so a cloud that fails for longer gets the person
 * back after minutes, not after another waitTimeoutSeconds (one up under a lasting HTTP 500 took 30 min).
 */
const CLEANUP_MAX_MS = 5 * 60_000;

/**
 * Destroys the instance a failed create made, going on through transient failures for up to
 * CLEANUP_MAX_MS. When even that fails, the state keeps the instance (ErrorResourceInitFailed with its
 * id), so it is not forgotten (DESIGN §8).
 */
async function destroyAfterFailure(
  ctx: ProviderContext,
  inputs: InstanceInputs,
  instance: CloudInstance,
  cause: unknown,
): Promise<never> {
  const why = messageOf(cause);
  const uuid = instance.instance_uuid;
  try {
    // Cancel stops the retries, never a destroy call under way; the instance is then kept (below).
    await retryUntil(({ deadline }) => ctx.api.instances.destroy(uuid, { deadline }), {
      deadline: Date.now() + Math.min(inputs.waitTimeoutSeconds * 1000, CLEANUP_MAX_MS),
      pauseMs: ctx.settings.pollIntervalMs,
      signal: ctx.signal,
    });
  } catch (destroyErr) {
    throw new ResourceInitError(
      `Could not create instance: ${why} Destroying the half-created instance ${uuid} also failed ` +
        `(${messageOf(destroyErr)}), so the stack keeps it: run \`pulumi up\` again to finish it, or \`pulumi destroy\` to remove it.`,
      { id: uuid, state: { inputs, cloud: instance } },
    );
  }
  throw new Error(
    `Could not create instance: ${why} The instance ${uuid} was destroyed so nothing is left billing.`,
  );
}

/**
 * A create whose power change lost its answer and stayed unsettled keeps its instance: the cloud may
 * have carried the change out (or still do so), and destroying the instance would throw away a create
 * that worked. The state holds it (ErrorResourceInitFailed), so the next run finishes it.
 */
function keptAfterUnsettledPower(
  inputs: InstanceInputs,
  instance: CloudInstance,
  unsettled: PowerChangeUnsettledError,
): ResourceInitError {
  const uuid = instance.instance_uuid;
  const goal = unsettled.change === "start" ? "started" : "stopped";
  return new ResourceInitError(
    `Could not create instance: the new instance ${uuid} could not be ${goal}: ${unsettled.finding}. ` +
      `The instance is kept in the stack, not destroyed. ${NEXT_STEP}`,
    { id: uuid, state: { inputs, cloud: unsettled.seen ?? instance } },
  );
}

/** A create cancelled before it made anything: a plain failure, since there is nothing to keep. */
function cancelledError(when: string): Error {
  return new Error(
    `Could not create instance: the operation was cancelled ${when}. Run \`pulumi up\` again to create it.`,
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

/**
 * A create cancelled (the engine's Cancel, Ctrl-C) once its instance existed keeps it: the state holds it
 * (ErrorResourceInitFailed with its id), and the next `pulumi up` finishes it. Nothing is destroyed in a
 * hurry. The title counts as not set yet (it may not be), so the next update sets it.
 */
function keptAfterCancel(
  inputs: InstanceInputs,
  instance: CloudInstance,
  cancelled: { message: string },
): ResourceInitError {
  const uuid = instance.instance_uuid;
  return new ResourceInitError(
    `Could not create instance: ${cancelled.message}. The instance ${uuid} was made and is kept in the stack, ` +
      "not destroyed: run `pulumi up` to finish it, or `pulumi destroy` to remove it.",
    { id: uuid, state: { inputs: { ...inputs, title: undefined }, cloud: instance } },
  );
}
