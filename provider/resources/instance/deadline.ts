import type { ProviderContext } from "../../framework/context";
import type { InstanceInputs } from "./inputs";

/**
 * When a converge must be done by: `waitTimeoutSeconds` from its start, on this machine's clock and on
 * the cloud's (a fast-clock emulator runs ahead of this machine). Every wait of the converge shares it, so
 * a create with waitForServices returns or fails within waitTimeoutSeconds in all, not per wait.
 */
export interface ConvergeDeadline {
  timeoutSeconds: number;
  /** Epoch ms on this machine's clock. */
  local: number;
  /** Epoch ms on the cloud's clock; undefined before the cloud sent its time. */
  cloud?: number;
}

export function convergeDeadline(ctx: ProviderContext, inputs: InstanceInputs): ConvergeDeadline {
  const timeoutMs = inputs.waitTimeoutSeconds * 1000;
  const cloudNow = ctx.api.cloudNow();
  return {
    timeoutSeconds: inputs.waitTimeoutSeconds,
    local: Date.now() + timeoutMs,
    cloud: cloudNow === undefined ? undefined : cloudNow + timeoutMs,
  };
}

/** A status wait: what is left of the converge's time, polled every poll interval. */
export function waitOptions(ctx: ProviderContext, deadline: ConvergeDeadline) {
  return {
    timeoutMs: Math.max(0, deadline.local - Date.now()),
    pollIntervalMs: ctx.settings.pollIntervalMs,
    signal: ctx.signal,
  };
}
