import * as pulumi from "@pulumi/pulumi";
import { connect, liftCall, withClient } from "./client";
import type { DataSourceOptions } from "./options";
import { CURRENCY, Currency } from "./pricing";

/** The caller's account balance. */
export interface Balance {
  /** Cash balance. */
  balance: number;
  /** Card (voucher) balance. */
  cardBalance: number;
  /** The currency of both balances: always `CNY`. */
  currency: Currency;
}

/**
 * Reads the caller's balance. Never cached: instances and runs the program starts spend it.
 *
 * @example
 * const { balance, currency } = await gpucloud.getBalance();
 */
export async function getBalance(opts?: DataSourceOptions): Promise<Balance> {
  const raw = await withClient(connect(opts), (client) => client.account.balance());
  return { balance: raw.balance, cardBalance: raw.card_balance, currency: CURRENCY };
}

/** `getBalance` as an Output. */
export function getBalanceOutput(opts?: DataSourceOptions): pulumi.Output<Balance> {
  return liftCall(() => getBalance(opts));
}
