/**
 * The account room's routes: /balance/info, /recharge/list and /bill/list, parsed and answered. The room
 * keeps no state of its own: balances and bills live in the shared wallet.
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { ok } from "../core/http/envelope";
import type { Room, RoomContext } from "../core/room";
import { paginate, pagingQuery, parseQuery } from "../core/http/validation";
import { AccountStore } from "./store";

const rechargeQuery = z.object({ ...pagingQuery, trade_number: z.string().optional() });
// /bill/list parameters are not shown (docs/design/cloud-api.md#account); the emulator takes page and page_size
// like the others.
const billQuery = z.object(pagingQuery);

/** /balance/info, /recharge/list and /bill/list. Balances and bills live in the shared wallet. */
export class AccountRoom implements Room<null> {
  readonly name = "account";
  readonly stateSchema = z.null();
  private readonly store: AccountStore;

  constructor(private readonly ctx: RoomContext) {
    this.store = new AccountStore(ctx.wallet);
  }

  register(api: FastifyInstance): void {
    api.get("/balance/info", async (request) => ok(this.store.balance(this.ctx.currentUser(request))));

    api.get("/recharge/list", async (request) => {
      this.ctx.currentUser(request);
      const query = parseQuery(rechargeQuery, request.query);
      const records = this.store.recharges(query.trade_number);
      return ok({ recharge_list: paginate(records, query.page, query.page_size), total: records.length });
    });

    api.get("/bill/list", async (request) => {
      const user = this.ctx.currentUser(request);
      const query = parseQuery(billQuery, request.query);
      const bills = this.store.bills(user);
      return ok({ bill_list: paginate(bills, query.page, query.page_size), total: bills.length });
    });
  }

  snapshot(): null {
    return null;
  }

  restore(): void {}

  reset(): void {}
}
