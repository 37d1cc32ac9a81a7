import { Emulator, type EmulatorOptions } from "./server";

export { API_BASE, ADMIN_BASE, BODY_LIMIT, Emulator, type EmulatorOptions } from "./server";
export type { Room, RoomContext } from "./core/room";
export type { ErrorStatusMode } from "./core/envelope";
export { fingerprint, userOfKeySpec } from "./core/auth";
export { DEFAULT_DURATIONS, DURATION_NAMES, type Durations } from "./core/durations";
export { OptionError } from "./core/options";
export { seededRandom } from "./core/random";
export { MAX_STORED_INPUT_BYTES } from "./core/validation";
export {
  INSTANCE_TRANSITIONS,
  IDLE_CHECK_SECONDS,
  PLATFORM_IDLE_THRESHOLD,
  BILLING_PERIOD_SECONDS,
  CHARGING_TYPE,
  STATUS as INSTANCE_STATUS,
} from "./instances/store";
export { SAVE_IMAGE_SECONDS } from "./images/store";
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
  emulator: Emulator;
}

/** Starts the emulator in this process; options mirror the CLI's (README, "The emulator"). */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const emulator = new Emulator(options);
  const { url, port } = await emulator.listen();
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
