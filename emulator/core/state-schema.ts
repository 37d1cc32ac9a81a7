import { z } from "zod";
import type { KnownState } from "./room";
import { describeIssue, formatPath } from "./validation";

/**
 * Building blocks of the state schemas (one per room, in each room's `state.ts`). The state file,
 * `PUT /_emulator/snapshot` and restore all read state through them, so a record that does not fit
 * is refused by name instead of breaking a transition later.
 */

/** Simulated Unix seconds: every time the emulator keeps is a whole second. */
export const seconds = z.int().min(0);

/** An amount of money as the wallet keeps it: a decimal string. */
export const decimal = z.string().regex(/^-?\d+(\.\d+)?$/, { message: "must be a decimal number string" });

export const nonEmpty = z.string().min(1);

/** One of a fixed list of strings, refused with the list spelled out. */
export function choice<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { message: `must be one of ${values.join(", ")}` });
}

/** A problem found in a state document: where (`rooms.instances[0].status`) and what is wrong there. */
export class StateProblem extends Error {
  constructor(
    readonly path: string,
    readonly rule: string,
  ) {
    super(path === "" ? rule : `${path}: ${rule}`);
    this.name = "StateProblem";
  }
}

/** Parses `input` with `schema`, or throws a StateProblem naming the first field at fault. */
export function parseState<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new StateProblem(formatPath(issue.path), describeIssue(issue, input));
}

/** A record's owner must have an account, or its next charge would fail. */
export function requireUser(known: KnownState, path: string, user: string): void {
  if (!known.users.has(user)) throw new StateProblem(path, `user ${user} has no balance in wallet.balances`);
}

/** A record's pre-deduction must exist, or settling it would fail. */
export function requireReservation(known: KnownState, path: string, reservationId: string): void {
  if (!known.reservations.has(reservationId)) {
    throw new StateProblem(path, `reservation ${reservationId} is not in wallet.reservations`);
  }
}
