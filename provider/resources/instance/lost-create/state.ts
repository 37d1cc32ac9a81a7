/**
 * What the recovery keeps for the whole process: the pending records and the reconcilers of each spec,
 * and the coalesced reads they list through. The Instance's process memory (../memory.ts) holds them and
 * hands them in, so the recovery never reaches up for them.
 */
import type { GpuCloudClient } from "../../../../sdk";
import type { ProviderContext } from "../../../framework/context";
import type { CreateSpec } from "../create-spec";
import type { InstanceReads } from "../reads";
import type { PendingRecords } from "./pending-records";
import type { Reconciler } from "./reconciler";

export interface RecoveryState {
  readonly records: PendingRecords;
  /** The reconciler of `spec` for this operation's client. */
  reconciler(ctx: ProviderContext, spec: CreateSpec): Reconciler;
  /** The coalesced reads of `api`. */
  reads(api: GpuCloudClient): InstanceReads;
}
