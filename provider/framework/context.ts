/**
 * What every resource operation runs with: the settings and one client per provider process. This
 * module is provider-process state (the serialized shim requires it at call time), never state.
 */
import { GpuCloudClient } from "../../sdk";
import { requestLogFromEnv } from "../request-log";
import { resolveProviderSettings, type Connection, type ProviderSettings } from "../settings";

export interface ProviderContext {
  api: GpuCloudClient;
  settings: ProviderSettings;
}

/** What the dynamic-provider server hands to `configure` (its `req.config`); keys are fully qualified. */
export interface ConfigSource {
  get(key: string): string | undefined;
}

let configSource: ConfigSource | undefined;
let cached: { key: string; client: GpuCloudClient } | undefined;

/** Called by every resource's `configure`: keys are fully qualified, secrets already unwrapped. */
export function configure(source: ConfigSource): void {
  configSource = source;
}

/** A fully qualified config key (`gpucloud:apiKey`) as Configure gave it to this provider process; undefined in a program. */
export function configuredValue(key: string): string | undefined {
  return configSource?.get(key);
}

type WarningSink = (message: string) => void;

let warningSink: WarningSink = (message) => process.stderr.write(`warning: ${message}\n`);

/** Something the user should know that does not fail the operation. Goes to stderr unless a provider server routes it. */
export function warn(message: string): void {
  warningSink(message);
}

/** Where warnings go from now on (the native plugin: the engine's log). */
export function routeWarnings(sink: WarningSink): void {
  warningSink = sink;
}

/** The effective settings; a missing key or URL is an error naming both ways to set it. */
export function providerSettings(env: NodeJS.ProcessEnv = process.env): ProviderSettings {
  return resolveProviderSettings(configuredValue, env);
}

/** The context of one operation: one client (and connection pool) per provider process and settings. */
export function providerContext(): ProviderContext {
  const settings = providerSettings();
  const key = `${settings.baseUrl}\n${settings.apiKey}\n${settings.requestTimeoutMs}`;
  if (cached?.key !== key) {
    void cached?.client.close();
    cached = { key, client: clientFor(settings) };
  }
  return { api: cached.client, settings };
}

/** A client for `connection`, logging its requests where GPUCLOUD_REQUEST_LOG asks for it. */
export function clientFor(connection: Connection): GpuCloudClient {
  return new GpuCloudClient({
    baseUrl: connection.baseUrl,
    apiKey: connection.apiKey,
    timeoutMs: connection.requestTimeoutMs,
    onRequest: requestLogFromEnv(),
  });
}
