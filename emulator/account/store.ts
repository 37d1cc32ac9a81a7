/**
 * The account room's store: a user's balance, recharge records and bills, read from the shared wallet and the
 * seed; nothing of HTTP.
 */
import type { BillRecord, Wallet } from "../core/wallet";
import { type RechargeRecord, SEED_RECHARGES } from "./seed";

/** Balance, recharge records and bills of a user. Money lives in the shared wallet. */
export class AccountStore {
  constructor(private readonly wallet: Wallet) {}

  /** card_balance (vouchers) is never credited by the emulator, so it stays 0. */
  balance(user: string): { balance: number; card_balance: number } {
    return { balance: Number(this.wallet.balance(user)), card_balance: 0 };
  }

  /** Newest first; `tradeNumber` matches any part of the order number, case-insensitively. */
  recharges(tradeNumber?: string): RechargeRecord[] {
    const wanted = tradeNumber?.toLowerCase();
    return SEED_RECHARGES.filter((r) => !wanted || r.trade_number.toLowerCase().includes(wanted)).sort(
      (a, b) => b.trade_time - a.trade_time,
    );
  }

  /** Newest first (bill fields and order are not shown, docs/design/cloud-api.md#account; the emulator's choice). */
  bills(user: string): BillRecord[] {
    return [...this.wallet.billsOf(user)].reverse();
  }
}
