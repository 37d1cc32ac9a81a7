/**
 * Everything one provider process remembers between the engine's calls, in one object: the
 * configuration the engine sent, one client per settings (one connection pool), where warnings go, and
 * the memory each resource kind declares for itself beside the code that uses it (the Instance's: the
 * instances it knows to be owned, the pending records Diff met, its lost-create reconcilers, its
 * coalesced reads). Nothing here is state: a new process (the next `pulumi up`) starts empty, and what
 * must outlive it is written to the stack's state.
 */
import { terminalSafe, type GpuCloudClient } from "../../sdk";

/** What the dynamic-provider server hands to `configure` (its `req.config`); keys are fully qualified. */
export interface ConfigSource {
  get(key: string): string | undefined;
}

export type WarningSink = (message: string) => void;

/** Tells the person running `pulumi` what one operation waits for and how long it may take. */
export type ProgressReporter = (message: string) => void;

/**
 * Makes the progress reporter of the operation that runs now: the native plugin's names the resource
 * of the call under way, so it must be made while that call runs, not when the message is sent.
 */
export type ProgressRoute = () => ProgressReporter;

/**
 * Pulumi's dynamic-provider server forwards nothing to the engine but the process's stderr, which the
 * Pulumi CLI shows without the resource: progress goes there as a line of its own.
 */
const toStderr: ProgressRoute = () => (message) => process.stderr.write(`info: ${message}\n`);

/** A kind of memory a part of the provider keeps for the life of the process, made at its first use. */
export interface MemoryPart<T> {
  /** Names the part, for a reader of a heap dump. */
  readonly name: string;
  create(): T;
}

export class ProcessMemory {
  private config?: ConfigSource;
  private connection?: { key: string; client: GpuCloudClient };
  private warningSink: WarningSink = (message) => process.stderr.write(`warning: ${message}\n`);
  private progressRoute: ProgressRoute = toStderr;
  private readonly memories = new Map<MemoryPart<unknown>, unknown>();

  /** What Configure sent: keys are fully qualified, secrets already unwrapped. */
  configure(source: ConfigSource): void {
    this.config = source;
  }

  /** A fully qualified config key (`gpucloud:apiKey`) as Configure gave it; undefined in a program. */
  configuredValue(key: string): string | undefined {
    return this.config?.get(key);
  }

  /** Something the user should know that does not fail the operation; quoted cloud text is escaped. */
  warn(message: string): void {
    this.warningSink(terminalSafe(message));
  }

  /** Where warnings go from now on (the native plugin: the engine's log). */
  routeWarnings(sink: WarningSink): void {
    this.warningSink = sink;
  }

  /**
   * The progress reporter of the operation that runs now. Quoted cloud text is escaped, and a message
   * is sent only when it differs from the last one this operation sent.
   */
  progressReporter(): ProgressReporter {
    const send = this.progressRoute();
    let last: string | undefined;
    return (message) => {
      const text = terminalSafe(message);
      if (text === last) return;
      last = text;
      send(text);
    };
  }

  /** Where progress goes from now on (the native plugin: the engine's log, as ephemeral status). */
  routeProgress(route: ProgressRoute): void {
    this.progressRoute = route;
  }

  /**
   * The client of these settings (`key` names them). Settings that change (a new Configure) close the
   * old client and make a new one, so every operation of one configuration shares one connection pool.
   */
  client(key: string, make: () => GpuCloudClient): GpuCloudClient {
    if (this.connection?.key !== key) {
      void this.connection?.client.close();
      this.connection = { key, client: make() };
    }
    return this.connection.client;
  }

  /** The memory of `kind` in this process, made at its first use. */
  memory<T>(kind: MemoryPart<T>): T {
    if (!this.memories.has(kind)) this.memories.set(kind, kind.create());
    return this.memories.get(kind) as T;
  }
}
