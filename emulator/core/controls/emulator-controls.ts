/**
 * What the emulator offers its own test controls (the admin API and the web console): the shared
 * core and the operations on the whole state. The server implements it; the controls depend on this
 * shape rather than on the server that registers them.
 */
import type { AccessGuard } from "../http/access";
import type { KeyRing } from "../auth";
import type { SimClock } from "../clock";
import type { FaultTable } from "./faults";
import type { RequestLog } from "./requestlog";
import type { Room } from "../room";
import type { Wallet } from "../wallet";

/** Where the API is served, under the emulator's URL (the spec's `{base_url}/api/open/v2`). */
export const API_BASE = "/api/open/v2";
/** Where the admin API is served: outside the API base, so no API client reaches it by accident. */
export const ADMIN_BASE = "/_emulator";
/** Bodies above this answer 413 (assets set their own, larger limit on their route). */
export const BODY_LIMIT = 1024 * 1024;

export interface EmulatorControls {
  readonly clock: SimClock;
  readonly keys: KeyRing;
  readonly wallet: Wallet;
  readonly faults: FaultTable;
  readonly log: RequestLog;
  readonly rooms: Room[];
  readonly access: AccessGuard;
  /** Moves simulated time forward, running every transition due on the way; resolves once saved. */
  advance(seconds: number): Promise<void>;
  /** Back to the seeded state; time keeps going. */
  reset(): Promise<void>;
  /** Resolves once services and the state file have caught up with the state. */
  settle(): Promise<void>;
  exportState(): Record<string, unknown>;
  importState(document: unknown): Promise<void>;
}
