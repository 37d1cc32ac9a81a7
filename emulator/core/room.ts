/**
 * In core, what a room is: the shape every API area takes (routes, state, reset, the clock's questions) and
 * what the server hands it.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { z } from "zod";
import { chunk, type Chunks } from "./state/settled-json";
import type { KnownState } from "./state/schema";
import type { Wallet } from "./wallet";

/**
 * A room is one API area of the emulator (instances, catalogue, assets, workflows, ...), in the
 * moto style (docs/design/style.md#the-emulator-routes-stores-and-the-clock): its routes only parse
 * and answer, its store holds state and rules and
 * knows nothing of HTTP. The server owns a list of rooms (`emulator/server.ts`) and drives them:
 *
 * - `register(api)` adds the room's routes to a fastify scope already prefixed with `/api/open/v2`.
 *   Every route is protected unless its options carry `config: { public: true }`; inside a handler
 *   `ctx.currentUser(request)` gives the caller's user id. Validate with `parseBody`/`parseQuery`
 *   (`core/http/validation.ts`), answer with `ok(data)` (`core/http/envelope.ts`) and throw the errors of
 *   `core/http/errors.ts`; the server maps them to the envelope and saves state after every mutating call.
 * - `registerAdmin(admin)` (optional) adds test controls to the `/_emulator` scope (no key, no rate limit).
 * - `snapshot()` returns plain JSON of the whole room state; `restore(state)` takes it back (state file,
 *   PUT /_emulator/snapshot). `stateSchema` is the zod schema of that JSON: restore only ever receives
 *   a document that passed it, and `checkState` (optional) refuses one whose records name users or
 *   reservations the rest of the state lacks, so that no transition fails later on a broken reference.
 *   `serializeState` (optional) is `JSON.stringify(snapshot())` in encoded chunks, cheaper: rooms whose
 *   records pile up (runs) reuse the chunks of records that can no longer change (core/state/settled-json.ts).
 * - `reset()` goes back to the seed (POST /_emulator/reset). Seed ids must be stable across resets.
 * - State transitions are data in the store (e.g. `{status, next: {status, at}}`). The clock asks every
 *   room for `nextDueAt()` (the earliest simulated second at which something is due, or undefined) and
 *   calls `runDue(now)` at that second, across all rooms in chronological order, so `advance(3600)`
 *   plays every transition, charge and check in order.
 */
export interface Room<State = unknown> {
  readonly name: string;
  readonly stateSchema: z.ZodType<State>;
  register(api: FastifyInstance): void;
  registerAdmin?(admin: FastifyInstance): void;
  snapshot(): State;
  serializeState?(): Chunks;
  restore(state: State): void;
  checkState?(state: State, known: KnownState): void;
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
   * The caller's key as a stable fingerprint (never the key itself), for what the API scopes to the
   * API key rather than the user (model-runs list and idempotency); throws 401 like currentUser.
   */
  currentKeyId(request: FastifyRequest): string;
  /** Balances, reservations (pre-deductions) and bill records, shared by all rooms. */
  wallet: Wallet;
  /** Fresh opaque ids, e.g. `ids.next("ins")`. The server saves state after every non-GET request and tick. */
  ids: { next(prefix: string): string };
}

/** What a room's store offers the state file, reset and the clock. */
export interface RoomStore<State> {
  snapshot(): State;
  serializeState?(): Chunks;
  restore(state: State): void;
  checkState?(state: State, known: KnownState): void;
  reset(): void;
  nextDueAt?(): number | undefined;
  runDue?(now: number): void;
}

/** A room whose whole state is one store: persistence, reset and the clock go straight to the store. */
export abstract class StoreRoom<State, S extends RoomStore<State>> implements Room<State> {
  abstract readonly name: string;
  abstract readonly stateSchema: z.ZodType<State>;

  constructor(readonly store: S) {}

  abstract register(api: FastifyInstance): void;

  snapshot(): State {
    return this.store.snapshot();
  }

  serializeState(): Chunks {
    return this.store.serializeState?.() ?? [chunk(JSON.stringify(this.store.snapshot()))];
  }

  restore(state: State): void {
    this.store.restore(state);
  }

  checkState(state: State, known: KnownState): void {
    this.store.checkState?.(state, known);
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
