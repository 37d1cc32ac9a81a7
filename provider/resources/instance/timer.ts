/**
 * The scheduled shutdown's rules, apart from the calls that set it: how times are shown, and the lead the
 * cloud wants, measured on the cloud's own clock (a fast-clock emulator is judged on its own time).
 */
import { formatWait } from "../../../sdk/answers";
import type { ProviderContext } from "../../framework/context";

/**
 * Clients send a scheduled shutdown at least this far ahead
 * (docs/design/live-service-notes.md#power-and-schedule-calls).
 */
export const SHUTDOWN_LEAD_SECONDS = 300;

/** A Unix time as people read it in messages: ISO 8601 in UTC, whole seconds. */
export function isoTime(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString().replace(".000Z", "Z");
}

/** The time a clock reads now, and whose clock it is, for messages. */
export interface ClockReading {
  unixSeconds: number;
  whose: string;
}

/**
 * The cloud's current time, from the `Date` header of its latest answer. Before any answer arrived one
 * cheap public call learns it; a cloud that sends no `Date` leaves this machine's clock.
 */
export async function cloudClock(ctx: ProviderContext): Promise<ClockReading> {
  if (ctx.api.cloudNow() === undefined) await ctx.api.verifyService();
  const cloudMs = ctx.api.cloudNow();
  return cloudMs === undefined
    ? { unixSeconds: Math.floor(Date.now() / 1000), whose: "this machine's clock (the cloud sends no Date)" }
    : { unixSeconds: Math.floor(cloudMs / 1000), whose: "the cloud's clock" };
}

/**
 * Refuses a shutdown time less than the lead ahead of the cloud's clock; runs before any call that bills,
 * so a time that cannot be set never starts or creates an instance first.
 */
export async function assertTimerAhead(ctx: ProviderContext, shutdownAt: number): Promise<void> {
  const now = await cloudClock(ctx);
  if (shutdownAt >= now.unixSeconds + SHUTDOWN_LEAD_SECONDS) return;
  const lead = `${SHUTDOWN_LEAD_SECONDS / 60} minutes`;
  // A time already past is said to be past, and by how much: "less than 5 minutes ahead" would misread it.
  const where =
    shutdownAt < now.unixSeconds
      ? `is already past, ${formatWait((now.unixSeconds - shutdownAt) * 1000)} before now`
      : `is less than ${lead} ahead of now`;
  throw new Error(
    `Could not schedule the shutdown: shutdownAt ${isoTime(shutdownAt)} ${where} (${isoTime(now.unixSeconds)} by ` +
      `${now.whose}), and the cloud wants a scheduled shutdown at least ${lead} ahead. Nothing was changed. ` +
      "Set shutdownAt later or remove it.",
  );
}
