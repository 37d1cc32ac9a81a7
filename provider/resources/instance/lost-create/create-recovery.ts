/**
 * One create's recovery: what create.ts asks of lost-create, in the order it asks. `make` an instance of
 * the spec: the one an earlier run's pending record of this resource made (resolved first), else one a
 * create call answered with, or, when its answer was lost, the one the spec's reconciler adopts; when
 * nothing was made, the call is sent again within the deadline and the lost one is watched (the late
 * watch: late-watch.ts). `mark` an answered instance with its owner's mark (owner-mark.ts); `release`
 * a claimed one's token for the mark; and `cleanUp` what the late watch found once the create ends
 * (late-arrivals.ts). Of the create it knows its order (CreateOrder): the spec, the deadline, the call
 * itself, and the inputs, of which it reads the title and waitTimeoutSeconds, and which a failure that
 * keeps something hands to the state whole.
 */
import {
  OutcomeUnknownError,
  retryUntil,
  type CallOptions,
  type Instance as CloudInstance,
} from "../../../../sdk";
import { untilAborted } from "../../../../sdk/sleep";
import { warn, type ProviderContext } from "../../../framework/context";
import { isCancelled, messageOf } from "../../../framework/errors";
import { describeSpec, type CreateSpec } from "../create-spec";
import { newClaimantId } from "./claim";
import { cleanUpLateArrivals, discardLateArrivals, keepOneLateArrival } from "./late-arrivals";
import { LateWatch } from "./late-watch";
import { cancelledError, refusedForLong } from "./nothing-made";
import { markAnswered } from "./owner-mark";
import { pendingCreateError, unresolvedError } from "./pending-record";
import { releaseClaim } from "./pending-resolution";
import { sendingAgain, statusReporter } from "./progress";
import type { Claimant } from "./reconciler";
import type { RecoveryState } from "./state";
import { openWindow } from "./window";

/** What the recovery reads of the resource's inputs. */
export interface ResourceInputs {
  /** Its owner's mark, the title its instance carries; undefined or "" when it has none. */
  title?: string;
  /** Named in messages; the destroy of a surplus instance keeps trying this long. */
  waitTimeoutSeconds: number;
}

/** The create a recovery is for. */
export interface CreateOrder<I extends ResourceInputs> {
  spec: CreateSpec;
  /** The resource's inputs, kept whole by the state when the create fails holding something. */
  inputs: I;
  /** No create call is sent after it (epoch ms). */
  deadline: number;
  /**
   * The create call itself. Never given the signal: a create cut off half way could make an instance
   * nobody knows of. Once sent it finishes (within its request timeout), and a lost answer is reconciled.
   */
  call(options: CallOptions): Promise<CloudInstance>;
}

export interface Made {
  instance: CloudInstance;
  /** Adopted after a lost answer: it bears a claim token until it takes its mark (`release`). */
  claimed: boolean;
  /** When the create call answered with it (epoch ms); undefined for a claimed one. */
  answeredAt?: number;
}

/** What `mark` found of the instance `make` made. */
export type MarkOutcome =
  /** This stack's: it carries its mark, or it was claimed (its token gives way to the mark in `release`). */
  | { kind: "ours" }
  /** Titled by someone else first (said in a warning): theirs, and another is made. */
  | { kind: "taken" }
  /**
   * The mark could not be written, or the marking failed (`cause`): the instance, as last `seen`, is still
   * this create's.
   */
  | { kind: "unwritten"; seen: CloudInstance; cause: unknown }
  /** The cloud refused the title itself (`why`, in words): no write of it will ever land. */
  | { kind: "refused"; why: Error };

type Sent =
  | { kind: "answered"; instance: CloudInstance; answeredAt: number }
  | { kind: "lost"; claimant: Claimant; lost: OutcomeUnknownError };

export class CreateRecovery<I extends ResourceInputs> {
  /** The calls judged to have made nothing, watched until the create ends. */
  private readonly watch: LateWatch;

  constructor(
    private readonly ctx: ProviderContext,
    private readonly state: RecoveryState,
    private readonly order: CreateOrder<I>,
  ) {
    this.watch = new LateWatch(
      ctx,
      state,
      order.spec,
      statusReporter(ctx.progress, `Creating ${this.name}: `),
    );
  }

  /**
   * An instance of the spec: the one a pending record of this resource made in an earlier run (when
   * Diff registered one), else a new one. A lost answer is settled by the spec's reconciler: the instance
   * it made is adopted, or, when nothing was made, the create is sent again within the deadline and the
   * call goes on being watched: an instance the watch claims is taken instead of another call. `listed`:
   * a listing just before stands for the one before the first call.
   */
  async make(listed: boolean): Promise<Made> {
    const { ctx, order, state } = this;
    const { records } = state;
    const record = records.take(order.spec, order.inputs.title);
    if (record) {
      const outcome = await unlessCancelled(ctx, records.resolve(ctx, record, order.deadline), () => {
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
      const late = this.watch.take();
      if (late) return { instance: late, claimed: true };
      const sent = await this.send(listed && round === 0).catch((err: unknown) => {
        if (isCancelled(err, ctx.signal))
          throw cancelledError("before the create call was sent, so no instance was made");
        throw refusedForLong(err) ?? err;
      });
      if (sent.kind === "answered")
        return { instance: sent.instance, claimed: false, answeredAt: sent.answeredAt };
      // Cancelled while the lost answer is settled: the outcome is left unknown, and recorded below.
      const reconciler = state.reconciler(ctx, order.spec);
      const outcome = await unlessCancelled(ctx, reconciler.settle(sent.claimant), () =>
        reconciler.abandon(
          sent.claimant,
          "the operation was cancelled before the instance list could tell whether the create made an instance",
        ),
      );
      if (outcome.kind === "adopted") return { instance: outcome.instance, claimed: true };
      if (outcome.kind === "unknown")
        throw pendingCreateError(order.inputs, order.spec, sent.claimant, outcome);
      this.watch.watch(sent.claimant.window, sent.claimant.sentAt!);
      if (Date.now() < order.deadline) {
        sent.claimant.progress?.(sendingAgain());
      } else {
        const adopted = await keepOneLateArrival(ctx, order.spec, order.inputs, this.watch);
        if (adopted) return { instance: adopted, claimed: true };
        const nearMisses = outcome.nearMisses.map((miss) => ` (${miss})`).join("");
        throw new Error(
          `Could not create instance: the answer to the create call was lost (${sent.lost.message}) and no instance of ` +
            `${describeSpec(order.spec)} appeared${nearMisses}, so none was made; it was not sent again because waitTimeoutSeconds ` +
            `(${order.inputs.waitTimeoutSeconds}) had passed. Run the update again.`,
        );
      }
    }
  }

  /**
   * Marks an instance a create call answered with as this resource's (a claimed one is this stack's
   * already). One someone else titled first is theirs: said in a warning, and another is to be made,
   * unless the deadline has passed, which fails the create.
   */
  async mark(made: Made): Promise<MarkOutcome> {
    if (made.answeredAt === undefined) return { kind: "ours" };
    const { ctx, order } = this;
    const mark = order.inputs.title ?? "";
    const marking = await markAnswered(
      ctx,
      made.instance,
      mark,
      made.answeredAt,
      order.deadline,
      this.state.timing(ctx),
    ).catch((cause: unknown) => ({ kind: "failed" as const, cause }));
    if (marking.kind === "marked") return { kind: "ours" };
    if (marking.kind === "failed") return { kind: "unwritten", seen: made.instance, cause: marking.cause };
    if (marking.kind === "unwritten")
      return { kind: "unwritten", seen: marking.seen ?? made.instance, cause: marking.cause };
    if (marking.kind === "refused") {
      return {
        kind: "refused",
        why: new Error(
          `the cloud refused its title ${JSON.stringify(mark)} (${messageOf(marking.cause)}), the mark that tells it is this stack's; fix title in your program.`,
        ),
      };
    }
    warn(
      `Instance ${made.instance.instance_uuid}, made by a create of ${describeSpec(order.spec)}, is not this stack's: ${marking.why}. ` +
        "This create makes another.",
    );
    if (Date.now() >= order.deadline) {
      throw new Error(
        `Could not create instance: the instance ${made.instance.instance_uuid} it made was taken before it could be titled (${marking.why}), ` +
          `and waitTimeoutSeconds (${order.inputs.waitTimeoutSeconds}) had passed, so no other was made. Run the update again.`,
      );
    }
    return { kind: "taken" };
  }

  /**
   * A claimed instance takes its mark over its claim token: a rename, safe to send again, so a lost
   * answer is no failure (it is sent again until the deadline). An answered one carries its mark already.
   */
  async release(made: Made): Promise<void> {
    if (!made.claimed) return;
    const { ctx, order } = this;
    const retrying = { deadline: order.deadline, pauseMs: ctx.settings.pollIntervalMs, signal: ctx.signal };
    await retryUntil(() => releaseClaim(ctx, made.instance.instance_uuid, order.inputs.title), retrying);
  }

  /**
   * Once the create holds `cloud`, its instance: a late arrival the watch claimed is surplus and is
   * destroyed; one it could not settle fails the create, which keeps `cloud` in the stack.
   */
  async cleanUp(cloud: CloudInstance): Promise<void> {
    if (this.watch.watching)
      await cleanUpLateArrivals(this.ctx, this.order.spec, this.order.inputs, this.watch, cloud);
  }

  /** Once the create failed: what the watch claimed is destroyed, what it could not settle named in a warning. */
  async cleanUpAfterFailure(): Promise<void> {
    if (this.watch.watching)
      await discardLateArrivals(this.ctx, this.order.spec, this.order.inputs, this.watch);
  }

  /**
   * One create call, after a listing (both ride out an outage until the deadline). A failure that proves
   * the call did no work (not sent, 429, 503: the SDK's transient errors of an unsafe call) sends it
   * again; a lost answer returns the claimant its reconciliation needs, its window opened by what the
   * listings before the call showed. `listed`: a listing just before stands for the one before this call.
   */
  private async send(listed: boolean): Promise<Sent> {
    const { ctx, order, state } = this;
    const reads = state.reads(ctx.api);
    const timing = state.timing(ctx);
    const until = { deadline: order.deadline, pauseMs: ctx.settings.pollIntervalMs, signal: ctx.signal };
    if (!listed) await retryUntil(() => reads.freshWalk(), until);
    return retryUntil(async ({ deadline: callDeadline }) => {
      // Taken as the call goes out: a walk that ends while it is out may already list the new instance.
      const window = openWindow(reads.newestCreateTime, reads.everListed);
      const sentAt = Date.now();
      try {
        const instance = await order.call({ deadline: callDeadline });
        state.taken.mark(instance.instance_uuid);
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
            giveUpAt: Math.max(order.deadline, settledAt),
            progress: statusReporter(
              ctx.progress,
              `Creating ${this.name}: the answer to the create call was lost (${howLost(err)}); `,
            ),
          },
        };
      }
    }, until);
  }

  /** The resource as progress names it: by its title (its mark), or its spec when it has none. */
  private get name(): string {
    const { title } = this.order.inputs;
    return title
      ? `instance ${JSON.stringify(title)}`
      : `an untitled instance of ${describeSpec(this.order.spec)}`;
  }
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
