/**
 * What the recovery keeps for the whole process, made in one piece: the instances known to be owned
 * (taken.ts), how slow the cloud has shown itself to carry out creates (pace.ts), the reconciler of each
 * spec (reconciler.ts) and the pending records met (pending-records.ts). It lists through the coalesced
 * reads that the Instance's process memory (../memory.ts) hands in, so the recovery never reaches up.
 */
import type { GpuCloudClient } from "../../../../sdk";
import type { ProviderContext } from "../../../framework/context";
import type { CreateSpec } from "../create-spec";
import type { InstanceReads } from "../reads";
import { CloudPace } from "./pace";
import { PendingRecords } from "./pending-records";
import { Reconcilers, type Reconciler } from "./reconciler";
import { TakenInstances } from "./taken";
import { recoveryTiming, type RecoveryTiming } from "./timing";

export class RecoveryState {
  readonly taken = new TakenInstances();
  /** How slow the cloud has shown itself to carry out creates: the timing model follows it. */
  readonly pace = new CloudPace();
  private readonly reconcilers = new Reconcilers(this.taken, this.pace);
  readonly records = new PendingRecords(
    (ctx, spec) => this.reconciler(ctx, spec),
    (ctx) => this.timing(ctx),
  );

  /** `reads`: the coalesced reads of a client, which every listing of the recovery goes through. */
  constructor(readonly reads: (api: GpuCloudClient) => InstanceReads) {}

  /** The reconciler of `spec` for this operation's client. */
  reconciler(ctx: ProviderContext, spec: CreateSpec): Reconciler {
    return this.reconcilers.for(ctx, spec, this.reads(ctx.api));
  }

  /** The timing model for this operation: its settings, and the cloud's pace as this process has seen it. */
  timing(ctx: ProviderContext): RecoveryTiming {
    return recoveryTiming(ctx.settings, this.pace.longestCommitMs);
  }
}
