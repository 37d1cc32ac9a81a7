/**
 * The web console's model: what the console reads and does, over the emulator's own stores and with the API's
 * rules; nothing of HTTP.
 */
import { AccountStore } from "../account/store";
import type { RechargeRecord } from "../account/seed";
import { AssetsRoom } from "../assets/routes";
import type { Asset } from "../assets/store";
import { notFound } from "../core/http/errors";
import type { Fault, FaultSpec } from "../core/controls/faults";
import type { LoggedRequest } from "../core/controls/requestlog";
import type { Room } from "../core/room";
import type { BillRecord } from "../core/wallet";
import { ImagesRoom } from "../images/routes";
import type { PersonalImage } from "../images/store";
import { InstancesRoom } from "../instances/routes";
import type { IdlePolicy, InstanceView, Utilization } from "../instances/store";
import { ModelRunsRoom } from "../model-runs/routes";
import type { ModelRunStore } from "../model-runs/store";
import type { EmulatorControls } from "../core/controls/emulator-controls";
import { StockRoom } from "../stock/routes";
import type { StockSetting, StockView } from "../stock/store";
import { statusName } from "./format";
import { WorkflowsRoom } from "../workflows/routes";
import type { WorkflowStore } from "../workflows/store";

/** How many runs and log entries a page shows (the newest); the totals are shown beside them. */
export const SHOWN_RUNS = 50;
export const SHOWN_REQUESTS = 200;

export interface KeySummary {
  fingerprint: string;
  disabled: boolean;
}

export interface UserSummary {
  user: string;
  balance: string;
  keys: KeySummary[];
  instances: number;
}

export interface InstanceRow extends InstanceView {
  owner: string;
  status_name: string;
  hourly_price: string;
  utilization: Utilization[];
  /** The status change under way and when it lands (simulated seconds). */
  next: { status: number; status_name: string; at: number } | null;
}

export type WorkflowRun = ReturnType<WorkflowStore["runList"]>["items"][number];
type ModelRunItem = ReturnType<ModelRunStore["list"]>["items"][number];
export type ModelRun = ModelRunItem & { events: ReturnType<ModelRunStore["events"]>["items"] };

export interface Account {
  user: string;
  balance: string;
  keys: KeySummary[];
  bills: BillRecord[];
  recharges: RechargeRecord[];
  workflowRuns: { total: number; items: WorkflowRun[] };
  modelRuns: { total: number; items: ModelRun[] };
  images: PersonalImage[];
  assets: Asset[];
}

/**
 * What the web console reads and does, over the emulator's own stores: the same rules as the API (an
 * action a user could not take through the API fails here with the API's error), and nothing of HTTP.
 * A user's resources are reached through that user, so the console's URLs cannot cross owners either.
 */
export class ConsoleModel {
  private readonly account: AccountStore;

  constructor(private readonly emulator: EmulatorControls) {
    this.account = new AccountStore(emulator.wallet);
  }

  now(): number {
    return this.emulator.clock.now();
  }

  /** Every user: those of the keys, and any the wallet holds beyond them. */
  userNames(): string[] {
    return [...new Set([...this.emulator.keys.users(), ...this.emulator.wallet.users()])];
  }

  users(): UserSummary[] {
    return this.userNames().map((user) => ({
      user,
      balance: this.emulator.wallet.balance(user),
      keys: this.keysOf(user),
      instances: this.instances.list(user).length,
    }));
  }

  instancesOf(user: string): InstanceRow[] {
    this.requireUser(user);
    return this.instances.list(user).map((view) => this.row(view));
  }

  instance(user: string, instanceUuid: string): InstanceRow {
    this.requireUser(user);
    return this.row(this.instances.info(user, instanceUuid));
  }

  accountOf(user: string): Account {
    this.requireUser(user);
    const workflowRuns = this.workflows.runList(user, { page_size: SHOWN_RUNS });
    const modelRuns = this.modelRunsOf(user);
    return {
      user,
      balance: this.emulator.wallet.balance(user),
      keys: this.keysOf(user),
      bills: this.account.bills(user),
      recharges: this.account.recharges(),
      workflowRuns: { total: workflowRuns.total, items: workflowRuns.items },
      modelRuns,
      images: this.images.list(user),
      assets: this.assets.listOf(user, this.now()),
    };
  }

  faults(): Fault[] {
    return this.emulator.faults.list();
  }

  /** The newest entries first, and how many the log holds. */
  requests(): { total: number; latest: LoggedRequest[] } {
    const all = this.emulator.log.list();
    return { total: all.length, latest: all.slice(-SHOWN_REQUESTS).reverse() };
  }

  // Instance actions need no user check of their own: the store finds no instance of an unknown owner.
  rename(user: string, instanceUuid: string, title: string): void {
    this.instances.updateTitle(user, instanceUuid, title);
  }

  stop(user: string, instanceUuid: string): void {
    this.instances.shutdown(user, instanceUuid);
  }

  start(user: string, instanceUuid: string): void {
    this.instances.startup(user, instanceUuid);
  }

  restart(user: string, instanceUuid: string): void {
    this.instances.restart(user, instanceUuid);
  }

  destroy(user: string, instanceUuid: string): void {
    this.instances.destroy(user, instanceUuid);
  }

  saveImage(user: string, instanceUuid: string): void {
    this.instances.saveImage(user, instanceUuid);
  }

  /** A policy with idle_period_minutes 0 cancels, as the API's set_idle_close does. */
  setIdlePolicy(user: string, instanceUuid: string, policy: IdlePolicy): void {
    this.instances.setIdleClose(user, instanceUuid, policy);
  }

  setUtilization(user: string, instanceUuid: string, value: Utilization): void {
    // The admin call takes any instance; the console reaches it through its owner like everything else.
    this.instance(user, instanceUuid);
    this.instances.setUtilization(instanceUuid, value);
  }

  advance(seconds: number): void {
    this.emulator.advance(seconds);
  }

  injectFault(fault: FaultSpec): void {
    this.emulator.faults.add(fault);
  }

  /**
   * Clears the pending fault at `index` if it is still the one the page showed (path and kind): the
   * list may have moved since, as calls use faults up.
   */
  clearFault(index: number, shown: { path: string; kind: string }): void {
    const pending = this.emulator.faults.list()[index];
    const same = pending?.path === shown.path && pending?.kind === shown.kind;
    if (!same || !this.emulator.faults.remove(index)) {
      throw notFound("pending fault", `${shown.kind} on ${shown.path}`);
    }
  }

  clearFaults(): void {
    this.emulator.faults.clear();
  }

  clearRequests(): void {
    this.emulator.log.clear();
  }

  reset(): void {
    this.emulator.reset();
  }

  stock(): StockView[] {
    return this.gpuStock.list();
  }

  /** Sets a model's stock by hand, as the admin API does: the cards instances hold stay theirs. */
  setStock(gpuUuid: string, setting: StockSetting): StockView {
    return this.gpuStock.set(gpuUuid, setting);
  }

  private row(view: InstanceView): InstanceRow {
    const { owner, hourly_price, utilization, next } = this.instances.adminView(view.instance_uuid);
    return {
      ...view,
      owner,
      status_name: statusName(view.status),
      hourly_price,
      utilization,
      next: next && { ...next, status_name: statusName(next.status) },
    };
  }

  /**
   * Model runs belong to API keys (docs/design/cloud-api.md#model-runs): a user's are those of every key of
   * the user, newest first.
   */
  private modelRunsOf(user: string): { total: number; items: ModelRun[] } {
    let total = 0;
    const items = this.keysOf(user).flatMap(({ fingerprint }) => {
      const page = this.modelRuns.list(fingerprint, { page_size: SHOWN_RUNS });
      total += page.total;
      return page.items.map((run) => ({
        ...run,
        events: this.modelRuns.events(fingerprint, run.run_id).items,
      }));
    });
    // created_at is "YYYY-MM-DD HH:MM:SS", so text order is time order.
    items.sort((a, b) => b.created_at.localeCompare(a.created_at));
    return { total, items: items.slice(0, SHOWN_RUNS) };
  }

  private keysOf(user: string): KeySummary[] {
    return this.emulator.keys
      .describe()
      .filter((key) => key.user === user)
      .map(({ fingerprint, disabled }) => ({ fingerprint, disabled }));
  }

  private requireUser(user: string): void {
    if (!this.emulator.wallet.hasUser(user)) throw notFound("user", user);
  }

  private get instances() {
    return roomOf(this.emulator.rooms, InstancesRoom).store;
  }

  private get gpuStock() {
    return roomOf(this.emulator.rooms, StockRoom).store;
  }

  private get images() {
    return roomOf(this.emulator.rooms, ImagesRoom).store;
  }

  private get assets() {
    return roomOf(this.emulator.rooms, AssetsRoom).store;
  }

  private get workflows() {
    return roomOf(this.emulator.rooms, WorkflowsRoom).store;
  }

  private get modelRuns() {
    return roomOf(this.emulator.rooms, ModelRunsRoom).store;
  }
}

function roomOf<R extends Room>(rooms: readonly Room[], kind: abstract new (...args: never[]) => R): R {
  const room = rooms.find((r): r is R => r instanceof kind);
  if (!room) throw new Error(`the emulator has no ${kind.name}`);
  return room;
}
