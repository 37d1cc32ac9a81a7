/**
 * Starting and stopping an instance when the answer can be lost. The power calls take no idempotency
 * key and the SDK never resends them: a lost answer (dropped, timed out, or an HTTP 500 after the work)
 * is an OutcomeUnknownError. As for a lost create (reconciler.ts) or save_image, the cloud is asked what
 * happened instead: the instance is read back, and a change on its way (or done) is waited for as after
 * an answered call. A call the cloud did not carry out is sent once more, only once it can no longer be
 * carried out late; a change whose outcome stays unsettled fails with what to do next, never repeated
 * blindly.
 */
import {
  instanceStatusName,
  NotFoundError,
  OutcomeUnknownError,
  retryUntil,
  sleep,
  type Instance as CloudInstance,
  type StartupParams,
} from "../../../sdk";
import type { ProviderContext } from "../../framework/context";
import { isCancelled, messageOf, UnsettledOutcomeError } from "../../framework/errors";
import { isHalting, POWERED_ON, RUNNING, STOPPED } from "./cloud";
import { instanceReads } from "./memory";
import { lateCommitMs } from "./lost-create";

export type PowerChange = "start" | "stop";

/** When the change must be done by, and the setting that decides it (messages name it). */
export interface PowerDeadline {
  /** Epoch ms on this machine's clock. */
  local: number;
  timeoutSeconds: number;
}

interface PowerCall {
  /** The API call, as messages name it. */
  call: "startup" | "shutdown";
  /** The state it brings the instance to, as messages name it. */
  goal: string;
  /**
   * The statuses the cloud takes the call from (start only a shut-down instance, stop only a running
   * one: docs/design/live-service-notes.md#power-and-schedule-calls). Read back after a lost answer, one of these
   * means the call has not taken effect (yet).
   */
  from: readonly number[];
  /** The instance is on its way to the goal, or there: the call took effect. */
  took(status: number): boolean;
  /** `gpu`: a start's override of the GPU model (it moves the instance to that model). */
  send(ctx: ProviderContext, instanceUuid: string, gpu?: StartupParams): Promise<void>;
}

const POWER_CALLS: Record<PowerChange, PowerCall> = {
  start: {
    call: "startup",
    goal: "running",
    from: STOPPED,
    took: (status) => POWERED_ON.includes(status),
    send: (ctx, uuid, gpu) => ctx.api.instances.startup(uuid, gpu),
  },
  stop: {
    call: "shutdown",
    goal: "stopped",
    from: [RUNNING],
    took: isHalting,
    send: (ctx, uuid) => ctx.api.instances.shutdown(uuid),
  },
};

/** What a Pulumi user does about an unsettled power change. */
export const NEXT_STEP = "Run `pulumi refresh` to see the instance's status, then `pulumi up`.";

/** A power change that lost its answers and did not finish: nothing may undo it (a create keeps its instance). */
export interface UnfinishedPowerChange {
  readonly change: PowerChange;
  readonly instanceUuid: string;
  /** What was found, as a clause: "the answer to its shutdown call was lost (...) and ...". */
  readonly finding: string;
  /** The instance as last read, when it could be read. */
  readonly seen: CloudInstance | undefined;
}

function unfinishedMessage(change: PowerChange, instanceUuid: string, finding: string): string {
  return `Could not ${change} instance ${instanceUuid}: ${finding}. ${NEXT_STEP}`;
}

/**
 * A power change whose outcome could not be settled after a lost answer. The instance exists and may
 * still be changing, so nothing may undo it or send the call again.
 */
export class PowerChangeUnsettledError extends UnsettledOutcomeError implements UnfinishedPowerChange {
  override readonly name = "PowerChangeUnsettledError";

  constructor(
    readonly change: PowerChange,
    readonly instanceUuid: string,
    readonly finding: string,
    readonly seen: CloudInstance | undefined,
  ) {
    super(unfinishedMessage(change, instanceUuid, finding));
  }
}

/**
 * A power change both of whose calls lost their answers while the instance showed, once neither could
 * still be carried out, that neither took effect: nothing changed, and it is not tried a third time.
 */
export class PowerChangeNotTakenError extends Error implements UnfinishedPowerChange {
  override readonly name = "PowerChangeNotTakenError";

  constructor(
    readonly change: PowerChange,
    readonly instanceUuid: string,
    readonly finding: string,
    readonly seen: CloudInstance,
  ) {
    super(unfinishedMessage(change, instanceUuid, finding));
  }
}

export function isUnfinishedPowerChange(err: unknown): err is UnfinishedPowerChange & Error {
  return err instanceof PowerChangeUnsettledError || err instanceof PowerChangeNotTakenError;
}

/**
 * Sends the power change. Returns once the cloud took it, answered or read back: the caller then waits
 * for the wanted status as after an answered call. Throws PowerChangeUnsettledError when the outcome of
 * a lost answer could not be settled, PowerChangeNotTakenError when both calls it sent did nothing, and
 * any other failure of the call as it came. `gpu`: a start on another GPU model (gpu-fallback.ts).
 */
export async function changePower(
  ctx: ProviderContext,
  instanceUuid: string,
  change: PowerChange,
  deadline: PowerDeadline,
  gpu?: StartupParams,
): Promise<void> {
  const first = await sendAndSettle(ctx, instanceUuid, change, deadline, gpu);
  if (first.kind === "took") return;
  // Sent again by the rule that sends a lost create again: the time in which the cloud may still carry
  // out a call it held has passed since the answer was lost, and the instance still shows the status
  // the call starts from, so the first call did nothing and never will. Even a copy the cloud carried
  // out late could not act twice: it takes a start only from stopped and a stop only from running.
  const second = await sendAndSettle(ctx, instanceUuid, change, deadline, gpu);
  if (second.kind === "took") return;
  throw new PowerChangeNotTakenError(
    change,
    instanceUuid,
    `the answers to both ${POWER_CALLS[change].call} calls were lost (${how(first.lost)}, then ${how(second.lost)}), and ` +
      `${seconds(lateCommitMs(ctx.settings))} after each the instance was still ${describe(second.seen)}: ` +
      "the cloud carried out neither, and the call was not sent a third time",
    second.seen,
  );
}

type Settled = { kind: "took" } | { kind: "not-taken"; lost: OutcomeUnknownError; seen: CloudInstance };

async function sendAndSettle(
  ctx: ProviderContext,
  instanceUuid: string,
  change: PowerChange,
  deadline: PowerDeadline,
  gpu: StartupParams | undefined,
): Promise<Settled> {
  try {
    await POWER_CALLS[change].send(ctx, instanceUuid, gpu);
    return { kind: "took" };
  } catch (err) {
    if (!(err instanceof OutcomeUnknownError)) throw err;
    return settle(ctx, instanceUuid, change, err, Date.now(), deadline).catch((settleErr: unknown) => {
      if (!isCancelled(settleErr, ctx.signal)) throw settleErr;
      throw new PowerChangeUnsettledError(
        change,
        instanceUuid,
        `the answer to its ${POWER_CALLS[change].call} call was lost (${how(err)}), and the operation was cancelled ` +
          "before whether the call took effect could be told; it was not sent again",
        undefined,
      );
    });
  }
}

/**
 * What a power call whose answer was lost at `lostAt` did. Read back at once: a lost answer mostly
 * follows work done (the instance is already changing). An instance that still shows the status the
 * call starts from is read again once the cloud can no longer carry the call out late.
 */
async function settle(
  ctx: ProviderContext,
  instanceUuid: string,
  change: PowerChange,
  lost: OutcomeUnknownError,
  lostAt: number,
  deadline: PowerDeadline,
): Promise<Settled> {
  const power = POWER_CALLS[change];
  const lostCall = `the answer to its ${power.call} call was lost (${how(lost)})`;
  const settledAt = lostAt + lateCommitMs(ctx.settings);
  let seen = await readBack(ctx, instanceUuid, change, lostCall, deadline);
  if (power.from.includes(seen.status) && Date.now() < settledAt) {
    await sleep(Math.min(settledAt, deadline.local) - Date.now(), ctx.signal);
    seen = await readBack(ctx, instanceUuid, change, lostCall, deadline);
  }
  if (power.took(seen.status)) return { kind: "took" };
  if (!power.from.includes(seen.status)) {
    throw new PowerChangeUnsettledError(
      change,
      instanceUuid,
      `${lostCall}, and the instance is now ${describe(seen)}: neither on its way to ${power.goal} nor as ` +
        "the call found it, so something else changed it meanwhile; the call was not sent again",
      seen,
    );
  }
  if (Date.now() < settledAt) {
    throw new PowerChangeUnsettledError(
      change,
      instanceUuid,
      `${lostCall}, and the instance is still ${describe(seen)}; the cloud may still carry the call out, ` +
        `but waitTimeoutSeconds (${deadline.timeoutSeconds}) ended before that could be told, so it was not sent again`,
      seen,
    );
  }
  return { kind: "not-taken", lost, seen };
}

/**
 * The instance, read through transient failures until the deadline. "Gone" stays NotFoundError (the
 * cloud said so); any other failure leaves the outcome unsettled.
 */
async function readBack(
  ctx: ProviderContext,
  instanceUuid: string,
  change: PowerChange,
  lostCall: string,
  deadline: PowerDeadline,
): Promise<CloudInstance> {
  try {
    return await retryUntil(() => instanceReads(ctx).info(instanceUuid), {
      deadline: deadline.local,
      pauseMs: ctx.settings.pollIntervalMs,
      signal: ctx.signal,
    });
  } catch (err) {
    if (err instanceof NotFoundError) throw err;
    if (isCancelled(err, ctx.signal)) throw err;
    throw new PowerChangeUnsettledError(
      change,
      instanceUuid,
      `${lostCall}, and reading the instance back failed (${messageOf(err)}), ` +
        "so whether the call took effect cannot be told; it was not sent again",
      undefined,
    );
  }
}

/** How the answer was lost, without the SDK's advice (it names SDK calls a Pulumi user does not have). */
function how(lost: OutcomeUnknownError): string {
  return lost.status === undefined ? "no answer came" : `answered HTTP ${lost.status}`;
}

function describe(instance: CloudInstance): string {
  return `${instanceStatusName(instance.status)} (status ${instance.status})`;
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
