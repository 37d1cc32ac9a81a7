/**
 * Pending transitions are data on the records they change (`{..., at}`), so they persist and the
 * clock drives them (core/room.ts). These two helpers answer the clock's questions over such records.
 */

/** A transition that happens at simulated second `at`. */
export interface Pending {
  at: number;
}

/** The earliest second at which one of the records has something due, or undefined when none has. */
export function earliestDue<T>(records: Iterable<T>, pending: (record: T) => Pending | null | undefined) {
  let earliest: number | undefined;
  for (const record of records) {
    const at = pending(record)?.at;
    if (at !== undefined && (earliest === undefined || at < earliest)) earliest = at;
  }
  return earliest;
}

/** The records whose transition is due by `now`, oldest first, so they play in the order they happened. */
export function dueByNow<T>(
  records: Iterable<T>,
  pending: (record: T) => Pending | null | undefined,
  now: number,
) {
  return [...records]
    .filter((record) => {
      const at = pending(record)?.at;
      return at !== undefined && at <= now;
    })
    .sort((a, b) => pending(a)!.at - pending(b)!.at);
}
