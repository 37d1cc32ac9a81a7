/**
 * The package's `pulumi-gpucloud/emulator` entry: `startEmulator` and the option types, and (marked internal)
 * what this repository's tests, bench and demo reach inside.
 */
import type { EmulatorOptions } from "./core/emulator-options";
import { Emulator } from "./server";

export type { EmulatorOptions, ErrorStatusMode, GpuStock } from "./core/emulator-options";
export { DEFAULT_DURATIONS, DURATION_NAMES, type Durations } from "./core/durations";
export { seededRandom } from "./core/random";

// The emulator's internals, for this repository's tests, bench and demo. Marked @internal, they stay out
// of the published declarations (stripInternal), whose modules would bring fastify's and zod's own.
/** @internal */
export { Emulator } from "./server";
/** @internal */
export { API_BASE, ADMIN_BASE, BODY_LIMIT } from "./core/controls/emulator-controls";
/** @internal */
export type { Room, RoomContext } from "./core/room";
/** @internal */
export { fingerprint, userOfKeySpec } from "./core/auth";
/** @internal */
export { OptionError } from "./core/options";
/** @internal */
export { MAX_STORED_INPUT_BYTES } from "./core/http/validation";
/** @internal */
export {
  INSTANCE_TRANSITIONS,
  IDLE_CHECK_SECONDS,
  PLATFORM_IDLE_THRESHOLD,
  BILLING_PERIOD_SECONDS,
} from "./instances/store";
/** @internal */
export { CHARGING_TYPE, STATUS as INSTANCE_STATUS } from "./instances/codes";
/** @internal */
export { SAVE_IMAGE_SECONDS } from "./images/store";
/** @internal */
export { SERVICES_BASE, SSH_IDENTIFICATION } from "./services/gateway";

export interface RunningEmulator {
  /** http://HOST:PORT, the `{base_url}` clients take. */
  url: string;
  /** url + /api/open/v2. */
  apiBase: string;
  port: number;
  /** Simulated Unix seconds. */
  now(): number;
  /**
   * Moves simulated time forward, running every transition due (same as POST /_emulator/clock/advance).
   * The state changes at once; the promise resolves when services and the state file have caught up.
   */
  advance(seconds: number): Promise<void>;
  /** Back to the seeded state (same as POST /_emulator/reset); resolves like advance. */
  reset(): Promise<void>;
  close(): Promise<void>;
  /** @internal */
  emulator: Emulator;
}

/** Starts the emulator in this process; options mirror the CLI's flags (`gpucloud-emulator --help`). */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const emulator = new Emulator(options);
  // A start that cannot listen (the port is taken) gives its state file back for the next try.
  const { url, port } = await emulator.listen().catch(async (error: unknown) => {
    await emulator.close().catch(() => undefined);
    throw error;
  });
  return {
    url,
    apiBase: `${url}/api/open/v2`,
    port,
    now: () => emulator.clock.now(),
    advance: (seconds) => emulator.advance(seconds),
    reset: () => emulator.reset(),
    close: () => emulator.close(),
    emulator,
  };
}
