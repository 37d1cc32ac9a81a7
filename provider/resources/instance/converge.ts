/** Brings an existing instance to the wanted title, power state and scheduled shutdown (create, adopt, update). */
import type { Instance as CloudInstance } from "../../../sdk";
import type { ProviderContext } from "../../framework/context";
import { sameValue } from "../../framework/diff";
import { RUNNING, scheduledShutdown, SHUTTING_DOWN, STOPPED } from "./cloud";
import type { InstanceInputs } from "./inputs";
import { instanceReads } from "./reads";

/** field-notes.md: clients send a scheduled shutdown at least 5 minutes ahead. */
const SHUTDOWN_LEAD_SECONDS = 300;

/** How long this instance's waits last, and how often they poll. */
export function waitOptions(ctx: ProviderContext, inputs: InstanceInputs) {
  return {
    timeoutMs: inputs.waitTimeoutSeconds * 1000,
    pollIntervalMs: ctx.settings.pollIntervalMs,
    maxPollIntervalMs: ctx.settings.pollIntervalMs,
  };
}

export function assertTimerAhead(shutdownTime: number): void {
  const earliest = Math.floor(Date.now() / 1000) + SHUTDOWN_LEAD_SECONDS;
  if (shutdownTime < earliest) {
    throw new Error(
      `Could not schedule the shutdown: shutdownAt ${new Date(shutdownTime * 1000).toISOString()} is less than 5 minutes ahead ` +
        `(field-notes.md: the cloud wants at least 5 minutes). Set shutdownAt later or remove it.`,
    );
  }
}

/**
 * Brings an existing instance to the desired title, power state and timer; returns the cloud's record.
 * `created`: the record a create just answered with; its status stands in for a first read (a title
 * change does not move the status, and every wait reads afresh).
 */
export async function converge(
  ctx: ProviderContext,
  instanceUuid: string,
  olds: Partial<InstanceInputs>,
  news: InstanceInputs,
  created?: CloudInstance,
): Promise<CloudInstance> {
  const { api } = ctx;
  const reads = instanceReads(api);
  if (news.title !== undefined && !sameValue(olds.title, news.title))
    await api.instances.updateTitle(instanceUuid, news.title);
  let cloud = created ?? (await reads.info(instanceUuid));
  // True while `cloud` is a full record read after the last change made here.
  let current = created === undefined;
  const wait = async (statuses: number[]) => {
    const reached = await reads.waitForStatus(instanceUuid, statuses, waitOptions(ctx, news));
    current = true;
    return reached;
  };
  if (news.running) {
    if (SHUTTING_DOWN.includes(cloud.status)) cloud = await wait(STOPPED);
    if (STOPPED.includes(cloud.status)) await api.instances.startup(instanceUuid);
    if (cloud.status !== RUNNING) cloud = await wait([RUNNING]);
  } else if (!STOPPED.includes(cloud.status)) {
    if (!SHUTTING_DOWN.includes(cloud.status) && cloud.status !== RUNNING)
      cloud = await wait([RUNNING, ...STOPPED]);
    if (cloud.status === RUNNING) await api.instances.shutdown(instanceUuid);
    cloud = await wait(STOPPED);
  }
  if (news.running && scheduledShutdown(cloud) !== news.shutdownAt) {
    current = false;
    if (news.shutdownAt !== undefined) {
      assertTimerAhead(news.shutdownAt);
      await api.instances.shutdownTimer(instanceUuid, { enable: true, shutdown_time: news.shutdownAt });
    } else {
      await api.instances.shutdownTimer(instanceUuid, { enable: false, shutdown_time: 0 });
    }
  }
  return current ? cloud : reads.info(instanceUuid);
}
