/**
 * Waiting until an instance is usable, not only running: every web (http) service in its server_map
 * answers. A service answers when it sends any HTTP status below 500 (a login page, a redirect, a 404 of
 * an API root all mean a server is there); a 5xx (a gateway in front of a service still starting) or a
 * failed connection does not.
 */
import type { Agent } from "undici";
import { undici } from "../../../sdk/http-library";
import {
  instanceStatusName,
  isTransientError,
  retryUntil,
  type Instance as CloudInstance,
} from "../../../sdk";
import type { ProviderContext } from "../../framework/context";
import { cancelledWhile, isCancelled, messageOf } from "../../framework/errors";
import type { ConvergeDeadline } from "./deadline";
import { RUNNING } from "./cloud";
import { instanceReads } from "./memory";

/** An http service of the instance: its title and address, and the address as messages show it. */
interface WebService {
  title: string;
  url: string;
  /** Without query, fragment or credentials: a web UI's address may carry a login token. */
  shown: string;
}

/** A round found a service not answering yet: retried until the deadline. */
const NOT_YET = new Error("not yet");
/** The cloud's clock passed the deadline (it may run faster than this machine's). */
const CLOUD_DEADLINE_PASSED = new Error("deadline passed on the cloud's clock");

/** The web services the wait covers: http entries with an http(s) address (nothing else can be asked). */
export function webServices(cloud: CloudInstance): WebService[] {
  return (cloud.server_map ?? [])
    .filter((entry) => entry.port_type === "http" && /^https?:\/\//i.test(entry.url ?? ""))
    .map((entry, index) => ({
      title: entry.title || `service ${index + 1}`,
      url: entry.url!,
      shown: withoutSecrets(entry.url!),
    }));
}

/**
 * Resolves with the instance's record once every web service answers. Each round reads the instance (it
 * must still be running) and asks every service once; rounds come every poll interval. The wait ends at
 * the converge's deadline on whichever clock reaches it first, this machine's or the cloud's, so a
 * fast-clock emulator is judged on its own time, as the services' delay is.
 */
export async function waitForServices(
  ctx: ProviderContext,
  instanceUuid: string,
  deadline: ConvergeDeadline,
): Promise<CloudInstance> {
  const cloudDeadline = deadline.cloud ?? Infinity;
  const reads = instanceReads(ctx);
  const agent = new (undici().Agent)({ connect: { timeout: ctx.settings.requestTimeoutMs } });
  let lastSeen = "no answer yet";
  try {
    return await retryUntil(
      async () => {
        const cloud = await reads.info(instanceUuid);
        if (cloud.status !== RUNNING) throw leftRunning(instanceUuid, cloud.status);
        // No question outlives the deadline by more than the poll it is.
        const askFor = Math.max(1, Math.min(ctx.settings.requestTimeoutMs, deadline.local - Date.now()));
        const silent = await unanswered(webServices(cloud), agent, askFor, ctx.signal);
        if (silent.length === 0) return cloud;
        lastSeen = silent.join("; ");
        if ((ctx.api.cloudNow() ?? -Infinity) >= cloudDeadline) throw CLOUD_DEADLINE_PASSED;
        throw NOT_YET;
      },
      {
        deadline: deadline.local,
        pauseMs: ctx.settings.pollIntervalMs,
        maxPauseMs: ctx.settings.pollIntervalMs,
        retryable: (err) => err === NOT_YET || isTransientError(err),
        signal: ctx.signal,
      },
    );
  } catch (err) {
    if (isCancelled(err, ctx.signal))
      throw cancelledWhile(
        err,
        `while waiting for the web services of instance ${instanceUuid}; last seen: ${lastSeen}`,
      );
    if (err !== NOT_YET && err !== CLOUD_DEADLINE_PASSED && !isTransientError(err)) throw err;
    const failedPoll =
      err instanceof Error && isTransientError(err) ? `; the last poll failed (${err.message})` : "";
    throw new Error(
      `Could not wait for the web services of instance ${instanceUuid}: they did not all answer within ` +
        `waitTimeoutSeconds (${deadline.timeoutSeconds} s, counted from the start of the create or start-up); ` +
        `last seen: ${lastSeen}${failedPoll}. Raise waitTimeoutSeconds, ` +
        "or check the service in the console (a service answers with any HTTP status below 500).",
    );
  } finally {
    await agent.close();
  }
}

/** "title (url): what it answered" for each service that does not answer yet. */
async function unanswered(
  services: WebService[],
  agent: Agent,
  timeoutMs: number,
  cancel: AbortSignal | undefined,
): Promise<string[]> {
  const seen = await Promise.all(services.map((s) => ask(s.url, agent, timeoutMs, cancel)));
  cancel?.throwIfAborted();
  return services.flatMap((s, i) => (seen[i] === undefined ? [] : [`${s.title} (${s.shown}): ${seen[i]}`]));
}

function withoutSecrets(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return "an address that is not a URL";
  }
}

/** Undefined when the service answers; otherwise what it did instead. */
async function ask(
  url: string,
  agent: Agent,
  timeoutMs: number,
  cancel: AbortSignal | undefined,
): Promise<string | undefined> {
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    const answer = await undici().request(url, {
      dispatcher: agent,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      // A question to a service changes nothing: Cancel may end it at once.
      signal: cancel ? AbortSignal.any([timeout, cancel]) : timeout,
    });
    await answer.body.dump();
    return answer.statusCode < 500 ? undefined : `HTTP ${answer.statusCode}`;
  } catch (err) {
    return `no answer (${messageOf(err)})`;
  }
}

function leftRunning(instanceUuid: string, status: number): Error {
  return new Error(
    `Could not wait for the web services of instance ${instanceUuid}: it stopped running while they started ` +
      `(now status ${status}, ${instanceStatusName(status)}). Check the instance in the console, then run the update again.`,
  );
}
