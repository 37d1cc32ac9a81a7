/**
 * What the Instance keeps for the life of a provider process, one part of the process's memory
 * (framework/process-memory.ts): the instances it knows to be owned, the pending records it met, the
 * reconcilers of lost creates, and the coalesced reads of each client. Every operation reaches it
 * through its context; Diff, which runs without one, through the process.
 */
import type { GpuCloudClient } from "../../../sdk";
import type { ProviderContext } from "../../framework/context";
import type { MemoryPart, ProcessMemory } from "../../framework/process-memory";
import {
  CloudPace,
  PendingRecords,
  Reconcilers,
  type Reconciler,
  TakenInstances,
  recoveryTiming,
  type RecoveryTiming,
} from "./lost-create";
import type { CreateSpec } from "./create-spec";
import { InstanceReads } from "./reads";

export class InstanceMemory {
  readonly taken = new TakenInstances();
  /** How slow the cloud has shown itself to carry out creates: the timing model follows it. */
  readonly pace = new CloudPace();
  private readonly reconcilers = new Reconcilers(this.taken, this.pace);
  readonly records = new PendingRecords(
    (ctx, spec) => this.reconciler(ctx, spec),
    (ctx) => recoveryTiming(ctx.settings, this.pace.longestCommitMs),
  );
  /** One coalescer per client, so per settings: a new client (a config change) reads on its own. */
  private readonly readsByClient = new WeakMap<GpuCloudClient, InstanceReads>();

  /** The coalesced reads of `api`. */
  reads(api: GpuCloudClient): InstanceReads {
    let reads = this.readsByClient.get(api);
    if (!reads) {
      reads = new InstanceReads(api);
      this.readsByClient.set(api, reads);
    }
    return reads;
  }

  /** The reconciler of `spec` for this operation's client. */
  reconciler(ctx: ProviderContext, spec: CreateSpec): Reconciler {
    return this.reconcilers.for(ctx, spec, this.reads(ctx.api));
  }
}

const INSTANCE_MEMORY: MemoryPart<InstanceMemory> = {
  name: "Instance",
  create: () => new InstanceMemory(),
};

export function instanceMemory(process: ProcessMemory): InstanceMemory {
  return process.memory(INSTANCE_MEMORY);
}

/** The timing model for this operation: its settings, and the cloud's pace as this process has seen it. */
export function instanceTiming(ctx: ProviderContext): RecoveryTiming {
  const memory = instanceMemory(ctx.process);
  return recoveryTiming(ctx.settings, memory.pace.longestCommitMs);
}

/** The coalesced reads of this operation's client. */
export function instanceReads(ctx: ProviderContext): InstanceReads {
  return instanceMemory(ctx.process).reads(ctx.api);
}
