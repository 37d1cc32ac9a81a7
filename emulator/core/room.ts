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
  /** Balances, reservations (pre-deductions) and bill records, shared by all rooms. */
  wallet: Wallet;
  /** Fresh opaque ids, e.g. `ids.next("ins")`. */
  ids: { next(prefix: string): string };
  /** Save state now (the server already does this after every non-GET request and every tick). */
  persist(): void;
}
