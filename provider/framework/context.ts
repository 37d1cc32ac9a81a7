/**
 * What every resource operation runs with: the settings, the client, and this provider process's
 * memory (process-memory.ts). The one ProcessMemory of the process lives here: the dynamic
 * providers' serialized shim requires this module at call time, so every operation of the process
 * reaches the same one.
 */
import {
  EndpointNotFoundError,
  GpuCloudClient,
  GpuCloudError,
  isTransientError,
  terminalSafe,
  UnreadableAnswerError,
} from "../../sdk";
import { requestLogFromEnv } from "../request-log";
import { OperationCancelledError } from "./errors";
import {
  ProcessMemory,
  type ConfigSource,
  type ProgressReporter,
  type ProgressRoute,
  type WarningSink,
} from "./process-memory";
import {
  ConfigurationError,
  settingProblems,
  resolveProviderSettings,
  SETTINGS,
  type Connection,
  type ProviderSettings,
} from "../settings";

export interface ProviderContext {
  api: GpuCloudClient;
  settings: ProviderSettings;
  /**
   * Aborted when the engine cancels the operation (the native plugin's Cancel); the dynamic providers
   * have none. Waits, backoffs and safe reads stop at it; a call that changes the cloud is never given
   * it, so a request under way finishes (within its own timeout) and its outcome stays known.
   */
  signal?: AbortSignal;
  /** What this provider process remembers between operations. */
  process: ProcessMemory;
  /**
   * Tells the person running `pulumi` what this operation waits for and how long it may take (the native
   * plugin: the resource's status in the engine's display; the dynamic providers: a line on stderr).
   */
  progress: ProgressReporter;
}

export type { ConfigSource } from "./process-memory";

const thisProcess = new ProcessMemory();

/** This provider process's memory, for what runs outside an operation (Diff, Configure). */
export function providerProcess(): ProcessMemory {
  return thisProcess;
}

/** Called by every resource's `configure`: keys are fully qualified, secrets already unwrapped. */
export function configure(source: ConfigSource): void {
  thisProcess.configure(source);
}

/** A fully qualified config key (`gpucloud:apiKey`) as Configure gave it to this provider process; undefined in a program. */
export function configuredValue(key: string): string | undefined {
  return thisProcess.configuredValue(key);
}

/** Something the user should know that does not fail the operation. Goes to stderr unless a provider server routes it. */
export function warn(message: string): void {
  thisProcess.warn(message);
}

/** Where warnings go from now on (the native plugin: the engine's log). */
export function routeWarnings(sink: WarningSink): void {
  thisProcess.routeWarnings(sink);
}

/** Where progress goes from now on (the native plugin: the engine's log, beside the resource). */
export function routeProgress(route: ProgressRoute): void {
  thisProcess.routeProgress(route);
}

/**
 * Refuses a setting that is set but malformed; a missing one is left to the first call that needs it.
 * A dynamic provider's check runs this, so a preview fails on a setting that `up` would refuse.
 */
export function assertSettingsWellFormed(env: NodeJS.ProcessEnv = process.env): void {
  const problems = settingProblems(configuredValue, env, { missing: false });
  if (problems.length > 0) throw new ConfigurationError(problems.map((p) => p.message).join(" "));
}

/** The effective settings; a missing key or URL is an error naming both ways to set it. */
export function providerSettings(env: NodeJS.ProcessEnv = process.env): ProviderSettings {
  return resolveProviderSettings(configuredValue, env);
}

/** The context of one operation: one client (and connection pool) per provider process and settings. */
export function providerContext(): ProviderContext {
  const settings = providerSettings();
  // Every setting the client or the Instance's recovery is made with: a change gets fresh ones.
  const key = `${settings.baseUrl}\n${settings.apiKey}\n${settings.requestTimeoutMs}\n${settings.sharedAccount}`;
  return {
    api: thisProcess.client(key, () => clientFor(settings)),
    settings,
    process: thisProcess,
    progress: thisProcess.progressReporter(),
  };
}

/**
 * Runs one resource operation with the context of this process. The first operation of a process
 * checks, with one cheap public call, that baseUrl serves the API: a wrong path answers every call
 * with a 404 that says nothing about the resource, and must never read as "deleted". An address that
 * does not serve the API fails the operation, there or at any later call, with a ConfigurationError
 * naming the URL and the setting to fix. A failure that may pass (the cloud unreachable for a moment)
 * leaves the check to the next operation, so this one rides out the outage until its own deadline.
 * `signal` (the native plugin's Cancel) is handed to the work as `ctx.signal`; aborted before the work
 * starts, the operation fails at once with its reason and nothing is sent.
 */
export async function runOperation<T>(
  work: (ctx: ProviderContext) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  signal?.throwIfAborted();
  const ctx: ProviderContext = signal ? { ...providerContext(), signal } : providerContext();
  try {
    await ctx.api.verifyService({ signal }).catch((err: unknown) => {
      if (signal?.aborted) throw new OperationCancelledError("before anything was sent to the cloud");
      // Before any work, an answer that cannot be read however often it is asked for says the address is
      // wrong; later the same error may follow a call that did its work, so it never says nothing changed.
      if (err instanceof UnreadableAnswerError) throw wrongAddress(err, ctx.settings.baseUrl);
      if (!isTransientError(err)) throw err;
    });
    return await work(ctx);
  } catch (err) {
    throw printable(isNotTheApi(err) ? wrongAddress(err, ctx.settings.baseUrl) : err);
  }
}

/**
 * The failure with its message safe to print: messages quote the cloud's titles, names and addresses,
 * and the Pulumi CLI prints them to a terminal, which would obey their control characters. The
 * provider's own messages hold none, so escaping the whole message changes only what came from outside.
 */
function printable(err: unknown): unknown {
  if (err instanceof Error) err.message = terminalSafe(err.message);
  return err;
}

/** A 404 that is not the API's own, or an answer that is not the API's envelope at all. */
function isNotTheApi(err: unknown): err is GpuCloudError {
  return err instanceof EndpointNotFoundError || Object.getPrototypeOf(err) === GpuCloudError.prototype;
}

function wrongAddress(err: GpuCloudError, baseUrl: string): ConfigurationError {
  return new ConfigurationError(
    `The GPU cloud base URL ${baseUrl} does not serve the API: ${err.message} ` +
      "Nothing was changed, and nothing counts as deleted. " +
      `Set \`gpucloud:baseUrl\` in the stack config (or ${SETTINGS.baseUrl.env}) to the service's root URL; the provider appends /api/open/v2.`,
  );
}

/** A client for `connection`, logging its requests where GPUCLOUD_REQUEST_LOG asks for it. */
export function clientFor(connection: Connection, env: NodeJS.ProcessEnv = process.env): GpuCloudClient {
  return new GpuCloudClient({
    baseUrl: connection.baseUrl,
    apiKey: connection.apiKey,
    timeoutMs: connection.requestTimeoutMs,
    onRequest: requestLogFromEnv(env),
  });
}
