/**
 * Brings an existing instance to the wanted title, power state, scheduled shutdown and ready services
 * (create, adopt, update). It plans first, from the instance's record, checks the plan, and only then
 * acts: a plan that cannot finish (a shutdown time too close) fails before any call that bills.
 */
import type { Instance as CloudInstance } from "../../../sdk";
import type { ProviderContext } from "../../framework/context";
import { sameValue } from "../../framework/diff";
import { isHalting, RUNNING, scheduledShutdown, SHUTTING_DOWN, STOPPED } from "./cloud";
import type { InstanceInputs } from "./inputs";
import { isClaimToken } from "./lost-create";
import { convergeDeadline, waitOptions, type ConvergeDeadline } from "./deadline";
import { startOnFirstFreeModel } from "./gpu-fallback";
import { changePower } from "./power";
import { instanceReads } from "./memory";
import { waitForServices } from "./services";
import { assertTimerAhead } from "./timer";

/** What converge does, decided from the instance's record before any call. */
export interface ConvergePlan {
  /** The new title, when it changes. */
  rename?: string;
  /** Start the instance (billing begins) or stop it; undefined leaves the power state to settle as it is. */
  power?: "start" | "stop";
  /** The scheduled shutdown wanted once the instance runs; undefined means none. */
  timer?: number;
  /** The plan may send `timer` to the cloud: it is checked against the cloud's clock first. */
  setsTimer: boolean;
  /** Wait until every web service answers once the instance runs. */
  awaitServices: boolean;
}

/**
 * The plan for bringing `cloud` to `news`. `olds` are the inputs the state had (on create, none): a
 * start-up is an instance not running, or one the state did not know as running.
 */
export function planConverge(
  cloud: CloudInstance,
  olds: Partial<InstanceInputs>,
  news: InstanceInputs,
): ConvergePlan {
  const power = news.running
    ? isHalting(cloud.status)
      ? "start"
      : undefined
    : STOPPED.includes(cloud.status)
      ? undefined
      : "stop";
  const timer = news.running ? news.shutdownAt : undefined;
  return {
    rename: news.title !== undefined && !sameValue(olds.title, news.title) ? news.title : undefined,
    power,
    timer,
    // A start-up may clear or keep the old timer, so a wanted time is checked whenever one starts.
    setsTimer: timer !== undefined && (power === "start" || scheduledShutdown(cloud) !== timer),
    awaitServices:
      news.running && news.waitForServices && (cloud.status !== RUNNING || olds.running !== true),
  };
}

/**
 * Brings an existing instance to the desired state; returns the cloud's record.
 * `created`: the record a create just answered with; its status stands in for a first read (a title
 * change does not move the status, and every wait reads afresh).
 * `deadline`: by default `waitTimeoutSeconds` from now; a create passes the one it took when its
 * instance was made, so the time its mark took counts, as its failures say ("counted from the start of
 * the create").
 */
export async function converge(
  ctx: ProviderContext,
  instanceUuid: string,
  olds: Partial<InstanceInputs>,
  news: InstanceInputs,
  created?: CloudInstance,
  deadline: ConvergeDeadline = convergeDeadline(ctx, news),
): Promise<CloudInstance> {
  const { api } = ctx;
  const reads = instanceReads(ctx);
  let cloud = created ?? (await reads.info(instanceUuid));
  const plan = planConverge(cloud, olds, news);
  if (plan.setsTimer) await assertTimerAhead(ctx, plan.timer!);
  if (plan.rename !== undefined) {
    // A token the state itself recorded is this stack's own claim, left when its mark could not be written.
    if (isClaimToken(cloud.title) && cloud.title !== olds.title)
      throw beingClaimed(instanceUuid, cloud.title!);
    if (olds.title === "" && cloud.title && cloud.title !== plan.rename)
      throw titledMeanwhile(instanceUuid, cloud.title, plan.rename);
    await api.instances.updateTitle(instanceUuid, plan.rename);
  }
  // True while `cloud` is a full record read after the last change made here.
  let current = created === undefined && plan.rename === undefined;
  const wait = async (statuses: number[]) => {
    const reached = await reads.waitForStatus(instanceUuid, statuses, waitOptions(ctx, deadline));
    current = true;
    return reached;
  };
  if (news.running) {
    if (SHUTTING_DOWN.includes(cloud.status)) cloud = await wait(STOPPED);
    if (STOPPED.includes(cloud.status)) await startOnFirstFreeModel(ctx, cloud, news, deadline);
    if (cloud.status !== RUNNING) cloud = await wait([RUNNING]);
    if (scheduledShutdown(cloud) !== plan.timer) {
      // The timer changed out of band while this waited: its time was not checked yet.
      if (plan.timer !== undefined && !plan.setsTimer) await assertTimerAhead(ctx, plan.timer);
      await setTimer(ctx, instanceUuid, plan.timer);
      current = false;
    }
    if (plan.awaitServices) {
      cloud = await waitForServices(ctx, instanceUuid, deadline);
      current = true;
    }
  } else if (plan.power === "stop") {
    if (!SHUTTING_DOWN.includes(cloud.status) && cloud.status !== RUNNING)
      cloud = await wait([RUNNING, ...STOPPED]);
    if (cloud.status === RUNNING) {
      // A timer can only be cancelled while the instance runs; left behind, it would outlive the stop.
      if (scheduledShutdown(cloud) !== undefined) await setTimer(ctx, instanceUuid, undefined);
      await changePower(ctx, instanceUuid, "stop", deadline);
    }
    cloud = await wait(STOPPED);
  }
  return current ? cloud : reads.info(instanceUuid);
}

/**
 * An instance that bears a claim token is being taken over by the recovery of a lost create (this
 * stack's or another's): renaming it now could hand one instance to two stacks.
 */
function beingClaimed(instanceUuid: string, token: string): Error {
  return new Error(
    `Could not title instance ${instanceUuid}: it bears the claim token ${JSON.stringify(token)}, so the recovery of a lost create ` +
      "(of this stack or of another deployer on the account) is taking it over, and retitling it now could give it to two stacks. " +
      "Run `pulumi refresh` after a few minutes: a claim that stands leaves the instance titled by its new owner; " +
      "if the token stays, the claim was abandoned, and you may title the instance in the console and run `pulumi up` again.",
  );
}

/**
 * The stack last saw the instance untitled (its mark never landed, or a person cleared it), and it now
 * bears a title that is not the stack's: another deployer's recovery may have taken it meanwhile, and
 * writing the mark over that title could hand one instance to two stacks.
 */
function titledMeanwhile(instanceUuid: string, title: string, mark: string): Error {
  return new Error(
    `Could not title instance ${instanceUuid} ${JSON.stringify(mark)}: the stack last saw it untitled, and it is now titled ` +
      `${JSON.stringify(title)}, which may mean another stack's recovery of a lost create took it. If no other stack holds it, ` +
      "run `pulumi refresh` to accept that title, then `pulumi up` to write this stack's; if another stack holds it, remove it " +
      "from this stack's state (`pulumi state delete`) and run `pulumi up` to make this stack's own.",
  );
}

/** Sets the scheduled shutdown, or cancels it when `at` is undefined. */
async function setTimer(ctx: ProviderContext, instanceUuid: string, at: number | undefined): Promise<void> {
  await ctx.api.instances.shutdownTimer(
    instanceUuid,
    at === undefined ? { enable: false, shutdown_time: 0 } : { enable: true, shutdown_time: at },
  );
}
