/**
 * The account room's seed: the recharge records every user starts with (the API shows their fields only,
 * docs/design/cloud-api.md#account; the amounts are made up).
 */

export interface RechargeRecord {
  amount: number;
  trade_time: number;
  pay_time: number;
  trade_number: string;
}

export const SEED_RECHARGES: readonly RechargeRecord[] = [
  { amount: 500, trade_time: 1_735_689_600, pay_time: 1_735_689_612, trade_number: "RC202501010001" },
  { amount: 300, trade_time: 1_738_368_000, pay_time: 1_738_368_009, trade_number: "RC202502010042" },
  { amount: 200, trade_time: 1_740_787_200, pay_time: 1_740_787_230, trade_number: "RC202503010107" },
];
