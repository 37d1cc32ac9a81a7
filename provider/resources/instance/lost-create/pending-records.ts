/**
 * What one provider process knows of pending records (pending-record.ts): those Diff met that no
 * Create holds, those a Create holds while it resolves them, those a Create settled (their Delete has
 * nothing left to do), and each record's resolution, so each is resolved once. pending-resolution.ts
 * says how a record is resolved at refresh, up and destroy.
 */
import type { Instance as CloudInstance } from "../../../../sdk";
import type { ProviderContext } from "../../../framework/context";
import { specKey, type CreateSpec } from "../create-spec";
import { pendingRecordOf, recordWindow, type PendingRecord } from "./pending-record";
import type { Outcome, Reconciler } from "./reconciler";
import { statusReporter } from "./progress";
import { adoptionMs, type RecoveryTiming } from "./timing";
import { inWindow } from "./window";

const isOwn = (record: PendingRecord, spec: CreateSpec, mark: string | undefined) =>
  record.mark !== undefined && record.mark === mark && specKey(record.pending.spec) === specKey(spec);

export class PendingRecords {
  /** Records Diff met in this process that no Create holds, by id. */
  private readonly registered = new Map<string, PendingRecord>();
  /** Records a Create of this process holds while it resolves them. */
  private readonly held = new Set<string>();
  /** Records a Create of this process resolved: their Delete has nothing left to do. */
  private readonly resolvedByCreate = new Set<string>();
  /** Resolutions under way or decided in this process, by record id, so each record is resolved once. */
  private readonly resolutions = new Map<string, Promise<Outcome>>();

  /** `reconcilerOf`: the reconciler of a spec for an operation's client; `timingOf`: an operation's timing model. */
  constructor(
    private readonly reconcilerOf: (ctx: ProviderContext, spec: CreateSpec) => Reconciler,
    private readonly timingOf: (ctx: ProviderContext) => RecoveryTiming,
  ) {}

  /** Diff met a pending record: keep it for the Create that replaces it. */
  register(id: string, stored: Record<string, unknown>): void {
    if (!this.resolvedByCreate.has(id) && !this.held.has(id))
      this.registered.set(id, pendingRecordOf(id, stored));
  }

  /**
   * The registered record of the resource this create is for (the same spec, the same mark), now the
   * caller's to resolve: it reports back with `settled` or `returned`. Undefined when there is none.
   */
  take(spec: CreateSpec, mark: string | undefined): PendingRecord | undefined {
    const record = [...this.registered.values()].find((r) => isOwn(r, spec, mark));
    if (record) {
      this.registered.delete(record.id);
      this.held.add(record.id);
    }
    return record;
  }

  /** Whether Diff registered a record of this resource (the same spec, the same mark) that no Create holds. */
  has(spec: CreateSpec, mark: string | undefined): boolean {
    return [...this.registered.values()].some((r) => isOwn(r, spec, mark));
  }

  /** The Create that took `record` settled it (adopted its instance, or found none): its Delete does nothing. */
  settled(record: PendingRecord): void {
    this.held.delete(record.id);
    this.resolvedByCreate.add(record.id);
  }

  /** The Create that took `record` could not settle it: it waits for its own Read or Delete, or the next run. */
  returned(record: PendingRecord): void {
    this.held.delete(record.id);
    this.registered.set(record.id, record);
  }

  /** A Create of this process settled the record `id`: its Delete has nothing left to do. */
  settledByCreate(id: string): boolean {
    return this.resolvedByCreate.has(id);
  }

  /** The record `id` is being resolved by its Delete: no Create takes it any more. */
  forget(id: string): void {
    this.registered.delete(id);
  }

  /**
   * An instance adopted by adoptInstanceUuid settles its own resource's registered record (the same spec
   * and mark) when the record's window holds it.
   */
  resolveByAdoption(spec: CreateSpec, mark: string | undefined, instance: CloudInstance): void {
    const record = [...this.registered.values()].find(
      (r) => isOwn(r, spec, mark) && inWindow(recordWindow(r.pending), instance, true),
    );
    if (!record) return;
    this.registered.delete(record.id);
    this.settled(record);
    this.resolutions.set(record.id, Promise.resolve({ kind: "adopted", instance }));
  }

  /** The record's outcome, deciding it by `deadline` (epoch ms) unless this process already did. */
  resolve(ctx: ProviderContext, record: PendingRecord, deadline: number): Promise<Outcome> {
    let resolution = this.resolutions.get(record.id);
    if (!resolution) {
      const now = Date.now();
      // A record is written only once its call had settled (its give-up time is never sooner). Whatever
      // the deadline, a candidate first seen now gets its grace and its claim.
      resolution = this.reconcilerOf(ctx, record.pending.spec).settle({
        id: record.claimantId,
        window: recordWindow(record.pending),
        earlierRun: true,
        settledAt: now,
        // A candidate first seen now gets its grace and its claim, with a few rounds between.
        giveUpAt: Math.max(deadline, now + adoptionMs(this.timingOf(ctx))),
        progress: statusReporter(ctx.progress, `Resolving the pending create ${record.id}: `),
      });
      this.resolutions.set(record.id, resolution);
      // Undecided is not an answer to keep: a later operation of this process (a person may have titled
      // the foreign instance meanwhile) looks again.
      void resolution.then((outcome) => {
        if (outcome.kind === "unknown") this.resolutions.delete(record.id);
      });
    }
    return resolution;
  }
}
