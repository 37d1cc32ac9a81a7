/**
 * What a create that fails after it made an instance leaves behind, and the error that says so: the
 * instance destroyed, or kept in the stack (ErrorResourceInitFailed with its id) whenever destroying it
 * could throw away a create that worked or leave a paid instance no state knows of. A create that fails
 * before anything was made (cancelled, or refused for long) leaves nothing: lost-create/nothing-made.ts.
 */
import { retryUntil, type Instance as CloudInstance } from "../../../sdk";
import type { ProviderContext } from "../../framework/context";
import { messageOf, ResourceInitError } from "../../framework/errors";
import type { InstanceInputs } from "./inputs";
import { NEXT_STEP, type UnfinishedPowerChange } from "./power";

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
 * id), so it is not forgotten (docs/design/contracts.md#the-native-plugin).
 */
export async function destroyAfterFailure(
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
export function keptAfterUnsettledPower(
  inputs: InstanceInputs,
  instance: CloudInstance,
  unsettled: UnfinishedPowerChange,
): ResourceInitError {
  const uuid = instance.instance_uuid;
  const goal = unsettled.change === "start" ? "started" : "stopped";
  return new ResourceInitError(
    `Could not create instance: the new instance ${uuid} could not be ${goal}: ${unsettled.finding}. ` +
      `The instance is kept in the stack, not destroyed. ${NEXT_STEP}`,
    { id: uuid, state: { inputs, cloud: unsettled.seen ?? instance } },
  );
}

/**
 * A new instance whose mark could not be confirmed either way (the cloud failed every read until the
 * create's deadline) is kept in the stack, not destroyed: it may already carry the mark, and another
 * deployer may already hold it. The next `pulumi up` titles it, unless a recovery is claiming it then.
 */
export function keptUnmarked(
  inputs: InstanceInputs,
  instance: CloudInstance,
  cause: unknown,
): ResourceInitError {
  const uuid = instance.instance_uuid;
  return new ResourceInitError(
    `Could not create instance: the new instance ${uuid} could not be given its title, the mark that tells it is this stack's ` +
      `(${messageOf(cause)}). The instance is kept in the stack, not destroyed. ${NEXT_STEP}`,
    { id: uuid, state: { inputs, cloud: instance } },
  );
}

/**
 * A create cancelled (the engine's Cancel, Ctrl-C) once its instance existed keeps it: the state holds it
 * (ErrorResourceInitFailed with its id), and the next `pulumi up` finishes it. Nothing is destroyed in a
 * hurry. The stored title is the cloud's (none, or the mark if it landed), so the next update sets the mark.
 */
export function keptAfterCancel(
  inputs: InstanceInputs,
  instance: CloudInstance,
  cancelled: { message: string },
): ResourceInitError {
  const uuid = instance.instance_uuid;
  return new ResourceInitError(
    `Could not create instance: ${cancelled.message}. The instance ${uuid} was made and is kept in the stack, ` +
      "not destroyed: run `pulumi up` to finish it, or `pulumi destroy` to remove it.",
    { id: uuid, state: { inputs, cloud: instance } },
  );
}
