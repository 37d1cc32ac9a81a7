/**
 * In core, the wallet every room charges through: balances, pre-deductions and bill records, in exact
 * decimals.
 */
import Decimal from "decimal.js";
import { z } from "zod";
import { insufficientBalance, notFound, paramError } from "./http/errors";
import { decimal, nonEmpty, seconds, text } from "./state/schema";

// The API shows decimal strings with 8 places (docs/design/cloud-api.md#units-and-formats).
/** Money is exact: decimal.js, rounded to 8 places, as the API shows amounts. */
const PLACES = 8;

export type Amount = Decimal.Value;

/**
 * A bill record. The API documents no bill fields, so these are the emulator's choice:
 * one record per charge, with the resource it paid for and the simulated period it covers.
 */
const billRecordSchema = z.strictObject({
  bill_id: nonEmpty,
  kind: text,
  resource_id: text,
  amount: decimal,
  start_time: seconds,
  end_time: seconds,
  create_time: seconds,
});
export type BillRecord = z.infer<typeof billRecordSchema>;

export interface ChargeInput {
  kind: string;
  resource_id: string;
  start_time: number;
  end_time: number;
}

/** Money moved out of the balance by a pre-deduction, waiting to be settled or released. */
const reservationSchema = z.strictObject({
  reservation_id: nonEmpty,
  user: nonEmpty,
  amount: decimal,
  kind: text,
  resource_id: text,
  create_time: seconds,
});
export type Reservation = z.infer<typeof reservationSchema>;

export const walletStateSchema = z.strictObject({
  balances: z.record(nonEmpty, decimal),
  reservations: z.array(reservationSchema),
  bills: z.record(nonEmpty, z.array(billRecordSchema)),
});
export type WalletState = z.infer<typeof walletStateSchema>;

export function money(value: Amount): string {
  return new Decimal(value).toDecimalPlaces(PLACES, Decimal.ROUND_HALF_UP).toFixed(PLACES);
}

/**
 * Balances per user, pre-deductions and bill records. Pure state: rooms call it from their stores;
 * every refusal is a typed error (400 code 1 "insufficient balance: ...").
 */
export class Wallet {
  private balances = new Map<string, Decimal>();
  private reservations = new Map<string, Reservation>();
  private bills = new Map<string, BillRecord[]>();

  constructor(
    private readonly now: () => number,
    private readonly nextId: (prefix: string) => string,
  ) {}

  /** Opens an account with a starting balance (used at seed time and for new users). */
  open(user: string, balance: Amount): void {
    this.balances.set(user, new Decimal(money(balance)));
  }

  users(): string[] {
    return [...this.balances.keys()];
  }

  hasUser(user: string): boolean {
    return this.balances.has(user);
  }

  balance(user: string): string {
    return money(this.account(user));
  }

  setBalance(user: string, balance: Amount): void {
    this.account(user);
    this.balances.set(user, new Decimal(money(balance)));
  }

  /** Refuses unless the balance covers `amount`; moves no money. */
  private requireAvailable(user: string, amount: Amount): void {
    const available = this.account(user);
    if (available.lessThan(money(amount))) throw insufficientBalance(money(amount), money(available));
  }

  /**
   * Charges for something already consumed (an hour of a running instance). The balance may go
   * below zero: usage cannot be refused after the fact. Returns the bill record.
   */
  charge(user: string, amount: Amount, input: ChargeInput): BillRecord {
    const value = new Decimal(money(amount));
    this.balances.set(user, this.account(user).minus(value));
    return this.addBill(user, value, input);
  }

  /** Pre-deducts `amount` (refused when the balance does not cover it); returns the reservation id. */
  reserve(user: string, amount: Amount, what: { kind: string; resource_id: string }): string {
    const value = new Decimal(money(amount));
    this.requireAvailable(user, value);
    this.balances.set(user, this.account(user).minus(value));
    const reservation: Reservation = {
      reservation_id: this.nextId("rsv"),
      user,
      amount: money(value),
      kind: what.kind,
      resource_id: what.resource_id,
      create_time: this.now(),
    };
    this.reservations.set(reservation.reservation_id, reservation);
    return reservation.reservation_id;
  }

  reservation(reservationId: string): Reservation {
    const found = this.reservations.get(reservationId);
    if (!found) throw notFound("reservation", reservationId);
    return found;
  }

  /**
   * Settles a pre-deduction against the actual cost: the actual cost becomes a bill record, the
   * rest goes back to the balance (or the shortfall is charged). Returns the released amount. The
   * bill covers the reservation's lifetime unless `billed` says what it paid for.
   */
  settle(
    reservationId: string,
    actual: Amount,
    billed?: Pick<ChargeInput, "kind" | "start_time" | "end_time">,
  ): { bill: BillRecord; released: string } {
    const reservation = this.reservation(reservationId);
    const frozen = new Decimal(reservation.amount);
    const cost = new Decimal(money(actual));
    if (cost.isNegative()) throw paramError("actual", "must not be negative");
    this.reservations.delete(reservationId);
    this.balances.set(reservation.user, this.account(reservation.user).plus(frozen).minus(cost));
    const bill = this.addBill(reservation.user, cost, {
      kind: reservation.kind,
      resource_id: reservation.resource_id,
      start_time: reservation.create_time,
      end_time: this.now(),
      ...billed,
    });
    return { bill, released: money(Decimal.max(frozen.minus(cost), 0)) };
  }

  /** Gives a whole pre-deduction back; returns the released amount. */
  release(reservationId: string): string {
    const reservation = this.reservation(reservationId);
    this.reservations.delete(reservationId);
    this.balances.set(reservation.user, this.account(reservation.user).plus(reservation.amount));
    return reservation.amount;
  }

  /** The user's bill records, oldest first. */
  billsOf(user: string): BillRecord[] {
    return this.bills.get(user) ?? [];
  }

  snapshot(): WalletState {
    return {
      balances: Object.fromEntries([...this.balances].map(([user, value]) => [user, money(value)])),
      reservations: [...this.reservations.values()],
      bills: Object.fromEntries(this.bills),
    };
  }

  restore(s: WalletState): void {
    this.balances = new Map(Object.entries(s.balances).map(([user, value]) => [user, new Decimal(value)]));
    this.reservations = new Map(s.reservations.map((r) => [r.reservation_id, r]));
    this.bills = new Map(Object.entries(s.bills));
  }

  clear(): void {
    this.balances.clear();
    this.reservations.clear();
    this.bills.clear();
  }

  private account(user: string): Decimal {
    const found = this.balances.get(user);
    if (!found) throw notFound("user", user);
    return found;
  }

  private addBill(user: string, amount: Decimal, input: ChargeInput): BillRecord {
    const bill: BillRecord = {
      bill_id: this.nextId("bill"),
      kind: input.kind,
      resource_id: input.resource_id,
      amount: money(amount),
      start_time: input.start_time,
      end_time: input.end_time,
      create_time: this.now(),
    };
    this.bills.set(user, [...this.billsOf(user), bill]);
    return bill;
  }
}
