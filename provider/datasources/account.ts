import { z } from "zod";
import { defineDataSource } from "../framework/define-data-source";
import type { Balance } from "../generated/data-sources";
import { connect, withClient } from "./client";
import { CURRENCY } from "./pricing";
import { currency } from "./schemas";

export const getBalanceSource = defineDataSource({
  name: "getBalance",
  description: "Reads the caller's balance. Never cached: instances and runs the program starts spend it.",
  example: "const { balance, currency } = await gpucloud.getBalance();",
  result: z
    .object({
      balance: z.number().describe("Cash balance."),
      cardBalance: z.number().describe("Card (voucher) balance."),
      currency: currency.describe("The currency of both balances: always `CNY`."),
    })
    .meta({ id: "Balance", description: "The caller's account balance." }),
  async read(_args, opts): Promise<Balance> {
    const raw = await withClient(connect(opts), (client) => client.account.balance());
    return { balance: raw.balance, cardBalance: raw.card_balance, currency: CURRENCY };
  },
});
