/**
 * The hourly cost of the instances one run has let through so far, kept in the policy pack's process
 * (./run.ts). An instance is let through only when the total with it stays within the limit; the check and
 * the count are one synchronous step, so analyses the engine runs side by side cannot both slip under
 * the limit with a room that holds one of them.
 *
 * A Fleet is let through with all its members at once, before any of them is registered (./fleets.ts); each
 * member then takes its own place in the count: a fleet member is counted under its place in its fleet, so
 * the fleet's count of it and its own are one entry, never two.
 */
import Decimal from "decimal.js";
import type { InstancePrice } from "./prices";
import type { FleetMembership } from "./resources";

export type Admission = { admitted: true } | { admitted: false; total: Decimal; before: InstancePrice[] };

/** What an entry of the count is: an instance by its URN, a fleet's member by its fleet and index. */
interface Counted {
  urn: string;
  fleet?: FleetMembership;
}

export class RunningTotal {
  /** By entry: an instance analysed twice in a run counts once, at its latest price. */
  private readonly counted = new Map<string, InstancePrice>();

  /**
   * Counts every one of `prices` if the total with them is at most `limit`; otherwise counts none of them
   * and says what was counted before them.
   */
  admit(prices: readonly InstancePrice[], limit: Decimal): Admission {
    const entries = new Set(prices.map(entryOf));
    const before = [...this.counted].filter(([entry]) => !entries.has(entry)).map(([, price]) => price);
    const total = [...before, ...prices].reduce((sum, p) => sum.plus(p.amount), new Decimal(0));
    if (total.greaterThan(limit)) return { admitted: false, total, before };
    for (const price of prices) this.counted.set(entryOf(price), price);
    return { admitted: true };
  }

  /** Counts nothing more for `instance`: what was counted for it (its fleet's count of it) is taken back. */
  release(instance: Counted): void {
    this.counted.delete(entryOf(instance));
  }
}

function entryOf({ urn, fleet }: Counted): string {
  return fleet ? `${fleet.urn}#${fleet.index}` : urn;
}
