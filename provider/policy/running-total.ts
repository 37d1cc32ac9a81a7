/**
 * The hourly cost of the instances one run has let through so far, kept in the policy pack's process
 * (./run.ts). An instance is let through only when the total with it stays within the limit; the check and
 * the count are one synchronous step, so analyses the engine runs side by side cannot both slip under
 * the limit with a room that holds one of them.
 */
import Decimal from "decimal.js";
import type { InstancePrice } from "./prices";

export type Admission = { admitted: true } | { admitted: false; total: Decimal; before: InstancePrice[] };

export class RunningTotal {
  /** By URN: an instance analysed twice in a run counts once, at its latest price. */
  private readonly counted = new Map<string, InstancePrice>();

  /** Counts `price` if the total with it is at most `limit`; otherwise counts nothing and says what was counted before it. */
  admit(price: InstancePrice, limit: Decimal): Admission {
    const before = [...this.counted.values()].filter((p) => p.urn !== price.urn);
    const total = before.reduce((sum, p) => sum.plus(p.amount), price.amount);
    if (total.greaterThan(limit)) return { admitted: false, total, before };
    this.counted.set(price.urn, price);
    return { admitted: true };
  }
}
