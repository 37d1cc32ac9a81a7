/**
 * What a create does with the late watch's findings (late-watch.ts): an instance of the spec that a
 * create call of this resource made after it had been judged to have made nothing. Claimed, it is this
 * create's: surplus beside the instance the create holds (destroyed, with a warning that says the cloud is
 * slower than the timing model), or the resource's instance when the create holds none. One the watch
 * could not settle fails the create, named; a watch that could not look says so in a warning.
 * create-recovery.ts calls these as the create ends (cleanUp, cleanUpAfterFailure) or reaches its
 * deadline holding nothing (make).
 */
import { retryUntil, type Instance as CloudInstance } from "../../../../sdk";
import { warn, type ProviderContext } from "../../../framework/context";
import { messageOf, ResourceInitError } from "../../../framework/errors";
import { describeSpec, type CreateSpec } from "../create-spec";
import type { LateArrivals, LateWatch } from "./late-watch";
import { seconds } from "./progress";
import { modelRequestMs } from "./timing";

/** What these read of the resource's inputs; a failure that keeps the create's instance keeps them whole. */
interface Inputs {
  waitTimeoutSeconds: number;
}

/**
 * Cleans up after the late watch of a create that holds its instance: a late arrival it claimed is this
 * create's surplus, and is destroyed; one it could not settle fails the create, which keeps its own
 * instance in the stack, naming the other, never passed over in silence.
 */
export async function cleanUpLateArrivals<I extends Inputs>(
  ctx: ProviderContext,
  spec: CreateSpec,
  inputs: I,
  watch: LateWatch,
  cloud: CloudInstance,
): Promise<void> {
  const late = await watch.end();
  for (const surplus of late.claimed) await destroySurplus(ctx, spec, inputs, surplus);
  if (late.unsettled.length > 0) {
    throw new ResourceInitError(
      `Could not create instance: ${lateArrivalsText(ctx, late)} Instance ${cloud.instance_uuid} was made and is kept in the stack; ` +
        "the others were neither adopted nor destroyed. Destroy in the console any of them that no stack holds " +
        "(`gpucloud-orphans` lists the instances no stack knows), then run `pulumi up` again.",
      { id: cloud.instance_uuid, state: { inputs, cloud } },
    );
  }
  if (late.unchecked !== undefined) warn(uncheckedText(spec, late.unchecked));
}

/**
 * The late watch of a create that failed: what it claimed bills for nothing and is destroyed; what it
 * could not settle is named in a warning, since the create's own failure is what the engine reports. A
 * cancelled create does not keep the person waiting for it: the watch ends in the background.
 */
export async function discardLateArrivals(
  ctx: ProviderContext,
  spec: CreateSpec,
  inputs: Inputs,
  watch: LateWatch,
): Promise<void> {
  const ended = watch.end().then(async (late) => {
    for (const surplus of late.claimed)
      await destroySurplus(ctx, spec, inputs, surplus).catch((err: Error) => warn(err.message));
    if (late.unsettled.length > 0)
      warn(`After this failed create of ${describeSpec(spec)}: ${lateArrivalsText(ctx, late)}`);
  });
  if (ctx.signal?.aborted) void ended;
  else await ended;
}

/**
 * A create that reached its deadline holding no instance: one its late watch claimed becomes the
 * resource's instance (the others are destroyed); one the watch could not settle fails the create, named.
 */
export async function keepOneLateArrival(
  ctx: ProviderContext,
  spec: CreateSpec,
  inputs: Inputs,
  watch: LateWatch,
): Promise<CloudInstance | undefined> {
  const late = await watch.end();
  const [kept, ...surplus] = late.claimed;
  for (const instance of surplus) await destroySurplus(ctx, spec, inputs, instance);
  if (kept) return kept;
  if (late.unsettled.length > 0)
    throw new Error(
      `Could not create instance: ${lateArrivalsText(ctx, late)} None was adopted or destroyed. Destroy in the console any ` +
        "that no stack holds (`gpucloud-orphans` lists the instances no stack knows), then run `pulumi up` again.",
    );
  if (late.unchecked !== undefined) warn(uncheckedText(spec, late.unchecked));
  return undefined;
}

function lateArrivalsText(ctx: ProviderContext, late: LateArrivals): string {
  const named = late.unsettled
    .map(({ candidates, reason }) => `${candidates.map((c) => c.instance_uuid).join(", ")} (${reason})`)
    .join("; ");
  return (
    `a create call of this resource judged to have made nothing may have been carried out later than ` +
    `${lateCommitText(ctx)} after it was sent, or another deployer made an instance of the same spec meanwhile: ${named}.`
  );
}

function uncheckedText(spec: CreateSpec, why: string): string {
  return (
    `A create call of ${describeSpec(spec)} whose answer was lost was judged to have made nothing, but the final check that ` +
    `the cloud did not carry it out late could not look (${why}). Run \`gpucloud-orphans\` to find any instance no stack knows.`
  );
}

function lateCommitText(ctx: ProviderContext): string {
  return `${seconds(3 * modelRequestMs(ctx.settings))} (3 x gpucloud:requestTimeoutMs)`;
}

/** Destroys an instance a late watch claimed: made by this create's call, held by no state, so it bills for nothing. */
async function destroySurplus(
  ctx: ProviderContext,
  spec: CreateSpec,
  inputs: Inputs,
  surplus: CloudInstance,
): Promise<void> {
  const uuid = surplus.instance_uuid;
  try {
    await retryUntil(({ deadline }) => ctx.api.instances.destroy(uuid, { deadline }), {
      deadline: Date.now() + inputs.waitTimeoutSeconds * 1000,
      pauseMs: ctx.settings.pollIntervalMs,
    });
  } catch (err) {
    throw new Error(
      `Could not destroy instance ${uuid}: a create call of this resource made it later than ${lateCommitText(ctx)} after it was sent, ` +
        `after another was made, and this create claimed it so that it could be destroyed, but the destroy failed (${messageOf(err)}). ` +
        "It bills until it is destroyed: destroy it in the console.",
    );
  }
  warn(
    `Instance ${uuid} was made by a create call of ${describeSpec(spec)} that the cloud carried out later than ` +
      `${lateCommitText(ctx)} after it was sent, after the call had been judged to have made nothing and another was made; ` +
      "it was claimed and destroyed, so nothing is left billing. The cloud creates slower than the provider's timing model " +
      "assumes: raise gpucloud:requestTimeoutMs to at least a third of the longest create you see.",
  );
}
