/**
 * `GPUCLOUD_REQUEST_LOG=FILE`: the provider appends one JSON line per API request it makes (method,
 * path, status, when it was sent, how long it took, its attempt and any Retry-After), for diagnosing
 * rate limits and slow operations. The SDK's events never carry the key or any header.
 */
import { appendFileSync } from "node:fs";
import type { RequestEvent } from "../sdk";

export const REQUEST_LOG_ENV = "GPUCLOUD_REQUEST_LOG";

export function requestLogFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): ((e: RequestEvent) => void) | undefined {
  const file = env[REQUEST_LOG_ENV]?.trim();
  if (!file) return undefined;
  // Synchronous appends keep lines whole and ordered; the log is a diagnostic switch, off by default.
  return (event) => appendFileSync(file, JSON.stringify(event) + "\n");
}
