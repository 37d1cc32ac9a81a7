/**
 * What the Instance keeps for the life of a provider process, one part of the process's memory
 * (framework/process-memory.ts): the coalesced reads of each client, and the recovery of lost creates
 * (lost-create/'s RecoveryState: the instances it knows to be owned, the pending records it met, the
 * reconcilers of lost creates), which lists through those reads. Every operation reaches it through its
 * context; Diff, which runs without one, through the process.
 */
import type { GpuCloudClient } from "../../../sdk";
import type { ProviderContext } from "../../framework/context";
import type { MemoryPart, ProcessMemory } from "../../framework/process-memory";
import { RecoveryState } from "./lost-create";
import { InstanceReads } from "./reads";

export class InstanceMemory {
  /** One coalescer per client, so per settings: a new client (a config change) reads on its own. */
  private readonly readsByClient = new WeakMap<GpuCloudClient, InstanceReads>();
  /** The recovery of lost creates, for the whole process. */
  readonly recovery = new RecoveryState((api) => this.reads(api));

  /** The coalesced reads of `api`. */
  reads(api: GpuCloudClient): InstanceReads {
    let reads = this.readsByClient.get(api);
    if (!reads) {
      reads = new InstanceReads(api);
      this.readsByClient.set(api, reads);
    }
    return reads;
  }
}

const INSTANCE_MEMORY: MemoryPart<InstanceMemory> = {
  name: "Instance",
  create: () => new InstanceMemory(),
};

function instanceMemory(process: ProcessMemory): InstanceMemory {
  return process.memory(INSTANCE_MEMORY);
}

/** The recovery of lost creates, as this process keeps it. */
export function instanceRecovery(process: ProcessMemory): RecoveryState {
  return instanceMemory(process).recovery;
}

/** The coalesced reads of this operation's client. */
export function instanceReads(ctx: ProviderContext): InstanceReads {
  return instanceMemory(ctx.process).reads(ctx.api);
}
