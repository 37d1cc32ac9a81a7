import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Wallet } from "./wallet";

/**
 * A room is one API area of the emulator (instances, catalogue, assets, workflows, ...), in the
 * moto style (STYLE.md): its routes only parse and answer, its store holds state and rules and
 * knows nothing of HTTP. The server owns a list of rooms (`emulator/server.ts`) and drives them:
 *
 * - `register(api)` adds the room's routes to a fastify scope already prefixed with `/api/open/v2`.
 *   Every route is protected unless its options carry `config: { public: true }`; inside a handler
 *   `ctx.currentUser(request)` gives the caller's user id. Validate with `parseBody`/`parseQuery`
 *   (`core/validation.ts`), answer with `ok(data)` (`core/envelope.ts`) and throw the errors of
 *   `core/errors.ts`; the server maps them to the envelope and saves state after every mutating call.
 * - `registerAdmin(admin)` (optional) adds test controls to the `/_emulator` scope (no key, no rate limit).
 * - `snapshot()` returns plain JSON of the whole room state; `restore(json)` takes it back (state file).
 * - `reset()` goes back to the seed (POST /_emulator/reset). Seed ids must be stable across resets.
 * - State transitions are data in the store (e.g. `{status, next: {status, at}}`). The clock asks every
 *   room for `nextDueAt()` (the earliest simulated second at which something is due, or undefined) and
 *   calls `runDue(now)` at that second, across all rooms in chronological order, so `advance(3600)`
 *   plays every transition, charge and check in order.
 */
export interface Room {
  readonly name: string;
  register(api: FastifyInstance): void;
  registerAdmin?(admin: FastifyInstance): void;
  snapshot(): unknown;
  restore(state: unknown): void;
  reset(): void;
  nextDueAt?(): number | undefined;
  runDue?(now: number): void;
}

/** What the server hands to every room when building it. */
export interface RoomContext {
  /** The simulated clock, in whole Unix seconds. */
  clock: { now(): number };
  /** The caller's user id; throws 401 when the request carries no valid key. */
  currentUser(request: FastifyRequest): string;
  /**
   * The caller's key as a stable fingerprint (never the key itself), for what the spec scopes to the
   * API key rather than the user (model-runs list and idempotency); throws 401 like currentUser.
   */
  currentKeyId(request: FastifyRequest): string;
  /** Balances, reservations (pre-deductions) and bill records, shared by all rooms. */
  wallet: Wallet;
  /** Fresh opaque ids, e.g. `ids.next("ins")`. */
  ids: { next(prefix: string): string };
  /** Save state now (the server already does this after every non-GET request and every tick). */
  persist(): void;
}

/** What a room's store offers the state file, reset and the clock. */
export interface RoomStore {
  snapshot(): unknown;
  restore(state: unknown): void;
  reset(): void;
  nextDueAt?(): number | undefined;
  runDue?(now: number): void;
}

/** A room whose whole state is one store: persistence, reset and the clock go straight to the store. */
export abstract class StoreRoom<S extends RoomStore> implements Room {
  abstract readonly name: string;

  constructor(readonly store: S) {}

  abstract register(api: FastifyInstance): void;

  snapshot(): unknown {
    return this.store.snapshot();
  }

  restore(state: unknown): void {
    this.store.restore(state);
  }

  reset(): void {
    this.store.reset();
  }

  nextDueAt(): number | undefined {
    return this.store.nextDueAt?.();
  }

  runDue(now: number): void {
    this.store.runDue?.(now);
  }
}
