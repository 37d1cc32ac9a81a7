/**
 * In core's state room, the building blocks every room's state schema (and a seed file) is made of, and the
 * StateProblem that names a field at fault.
 */
import { z } from "zod";
import { describeIssue, formatPath, MAX_STORED_INPUT_BYTES } from "../http/validation";

/**
 * Building blocks of the state schemas (one per room, in each room's `state.ts`). The state file,
 * `PUT /_emulator/snapshot` and restore all read state through them, so a record that does not fit
 * is refused by name instead of breaking a transition later. They hold the API's own rules (a title
 * of at most 50 characters, a run's inputs of at most 64 KiB, the statuses there are) and known
 * fields only (strict objects): a document the API could never have made is refused, not kept.
 */

/** What the rest of a state document holds, for a room to check its records' references against. */
export interface KnownState {
  users: ReadonlySet<string>;
  reservations: ReadonlySet<string>;
}

/** Simulated Unix seconds: every time the emulator keeps is a whole second. */
export const seconds = z.int().min(0);

/** An amount of money as the wallet keeps it: a decimal string. */
export const decimal = z.string().regex(/^-?\d+(\.\d+)?$/, { message: "must be a decimal number string" });

/**
 * The longest text a state field holds where the API sets no limit of its own: far more than the
 * emulator ever writes, so that a document made by hand cannot make every later save carry megabytes.
 */
export const MAX_STATE_TEXT = 4096;
export const text = z.string().max(MAX_STATE_TEXT);
export const nonEmpty = z.string().min(1).max(MAX_STATE_TEXT);

/** Text of at most `max` characters, counted as the API counts a title: an emoji counts once. */
export function characters(max: number) {
  return z.string().refine((value) => Array.from(value).length <= max, {
    message: `must be at most ${max} characters`,
  });
}

/** A run's inputs as the API stores them: an object of at most MAX_STORED_INPUT_BYTES as JSON. */
export const storedInputs = z
  .record(text, z.unknown())
  .refine((inputs) => Buffer.byteLength(JSON.stringify(inputs)) <= MAX_STORED_INPUT_BYTES, {
    message: `must be at most ${MAX_STORED_INPUT_BYTES} bytes as JSON, as the API stores a run's inputs`,
  });

/** One of a fixed list of strings, refused with the list spelled out. */
export function choice<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { message: `must be one of ${values.join(", ")}` });
}

/** A list of entries whose `key` must not repeat: a repeated id would make lookups pick one at random. */
export function uniqueList<S extends z.ZodType>(entry: S, key: (item: z.infer<S>) => string, name: string) {
  return z.array(entry).superRefine((items, ctx) => {
    const seen = new Map<string, number>();
    items.forEach((item, index) => {
      const id = key(item);
      const first = seen.get(id);
      if (first === undefined) seen.set(id, index);
      else
        ctx.addIssue({ code: "custom", path: [index, name], message: `repeats [${first}]'s ${name} ${id}` });
    });
  });
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
