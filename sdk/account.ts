/** Account: balance, recharge records and bills. */
import { z } from "zod";
import { endpoint, send, walk } from "./endpoints";
import type { PaginateOptions } from "./pagination";
import type { CallOptions, Transport } from "./transport";
import { int, listOf, whenSet } from "./zod-helpers";

export const BalanceSchema = z.looseObject({
  balance: z.number(),
  card_balance: z.number(),
});
export type Balance = z.infer<typeof BalanceSchema>;

export const RechargeSchema = z.looseObject({
  amount: z.number(),
  trade_time: whenSet(int).describe("order time"),
  pay_time: whenSet(int),
  trade_number: z.string().describe("order number"),
});
export type Recharge = z.infer<typeof RechargeSchema>;

export const RechargeListSchema = z.looseObject({ recharge_list: listOf(RechargeSchema), total: int });
export type RechargeList = z.infer<typeof RechargeListSchema>;

const numberOrString = z.union([z.number(), z.string()]);

// Bill fields are not shown (docs/design/cloud-api.md#account), so every field is optional and loosely typed.
export const BillSchema = z.looseObject({
  bill_id: whenSet(z.string()),
  instance_uuid: whenSet(z.string()),
  amount: whenSet(numberOrString),
  start_time: whenSet(numberOrString),
  end_time: whenSet(numberOrString),
  kind: whenSet(z.string()),
});
export type Bill = z.infer<typeof BillSchema>;

// The bill list's data shape is not shown (docs/design/cloud-api.md#account); read the first of the list names
// the other endpoints use (bill_list, items, list) and an optional total.
export const BillListSchema = z
  .looseObject({
    bill_list: listOf(BillSchema).optional(),
    items: listOf(BillSchema).optional(),
    list: listOf(BillSchema).optional(),
    total: whenSet(int),
  })
  .nullable()
  .transform((d) => ({
    bill_list: d?.bill_list ?? d?.items ?? d?.list ?? [],
    total: d?.total,
  }));
export type BillList = z.infer<typeof BillListSchema>;

export interface RechargeQuery {
  page?: number;
  page_size?: number;
  /** Fuzzy match on the order number. */
  trade_number?: string;
}

export interface BillQuery {
  page?: number;
  page_size?: number;
  [filter: string]: string | number | boolean | undefined;
}

/** Every endpoint of the area, once. */
const ENDPOINTS = {
  balance: endpoint("GET /balance/info", "read", BalanceSchema, {
    action: "read the account balance",
  }),
  // The API types page and page_size as strings here (docs/design/cloud-api.md#paging); query strings
  // carry them the same way.
  recharges: endpoint("GET /recharge/list", "read", RechargeListSchema, {
    action: "list recharge records",
    request: (query: RechargeQuery) => ({ query: { ...query } }),
    items: "recharge_list",
  }),
  bills: endpoint("GET /bill/list", "read", BillListSchema, {
    action: "list bills",
    request: (query: BillQuery) => ({ query: { ...query } }),
    items: "bill_list",
  }),
};

export class Account {
  constructor(private readonly transport: Transport) {}

  balance(options: CallOptions = {}): Promise<Balance> {
    return send(this.transport, ENDPOINTS.balance, [], options);
  }

  /** The recharge records, one page. */
  recharges(query: RechargeQuery = {}, options: CallOptions = {}): Promise<RechargeList> {
    return send(this.transport, ENDPOINTS.recharges, [query], options);
  }

  rechargesAll(
    filters: { trade_number?: string } = {},
    options: PaginateOptions = {},
  ): AsyncIterable<Recharge> {
    return walk(this.transport, ENDPOINTS.recharges, filters, options);
  }

  bills(query: BillQuery = {}, options: CallOptions = {}): Promise<BillList> {
    return send(this.transport, ENDPOINTS.bills, [query], options);
  }

  billsAll(
    filters: Omit<BillQuery, "page" | "page_size"> = {},
    options: PaginateOptions = {},
  ): AsyncIterable<Bill> {
    return walk(this.transport, ENDPOINTS.bills, filters, options);
  }
}
