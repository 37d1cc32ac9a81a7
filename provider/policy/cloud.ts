/**
 * What the cost guard reads of the cloud: the GPU and pod catalogues, the images instances are made from,
 * and the instances that already exist. It reads them at the stack's own endpoint only, with the settings
 * a program has (`gpucloud:baseUrl` / GPUCLOUD_BASE_URL, `gpucloud:apiKey` / GPUCLOUD_API_KEY): no other
 * address ever receives the stack's key. Each is read once per run (./run.ts), whatever the number of
 * instances and policies, and only when a policy needs it.
 */
import { createHash } from "node:crypto";
import { redact } from "../../sdk";
import { connect } from "../datasources/client";
import {
  getGpus,
  getInstances,
  getMarketImages,
  getPersonalImages,
  getPods,
  type GpuModel,
  type InstanceSummary,
  type Pod,
} from "../generated/data-sources";
import { messageOf } from "../framework/errors";
import { runPart } from "./run";

export interface Catalogue {
  /** Every GPU model, valid or not: an instance on a model withdrawn since still bills. */
  gpus: ReadonlyMap<string, GpuModel>;
  pods: ReadonlyMap<string, Pod>;
}

/** What an image is made from, as far as its price goes. */
export type ImageSource = { kind: "personal"; podUuid: string } | { kind: "market" };

/** What one stack's connection has read in this run; a failed read is kept too (see `reads`). */
interface Reads {
  catalogue?: Promise<Catalogue>;
  personalImages?: Promise<ReadonlyMap<string, string>>;
  marketImages?: Promise<ReadonlySet<string>>;
  instances?: Promise<readonly InstanceSummary[]>;
}

const READS = Symbol("cost guard cloud reads");

/**
 * This run's reads for the stack's connection. A failed read is kept: a run whose cloud is down answers
 * each of its thousand instances at once with the same failure, not after its own retries.
 */
function reads(): { reads: Reads; apiKey?: string } {
  const connection = connect({});
  const id = createHash("sha256").update(`${connection.baseUrl}\n${connection.apiKey}`).digest("hex");
  const byConnection = runPart(READS, () => new Map<string, Reads>());
  if (!byConnection.has(id)) byConnection.set(id, {});
  return { reads: byConnection.get(id)!, apiKey: connection.apiKey };
}

/** Runs `read` once per run into `slot`; its failure in words that never hold the key and say what to do. */
async function once<K extends keyof Reads>(
  what: string,
  slot: K,
  read: () => NonNullable<Reads[K]>,
  fresh = false,
): Promise<Awaited<NonNullable<Reads[K]>>> {
  let apiKey: string | undefined;
  try {
    const current = reads();
    apiKey = current.apiKey;
    if (fresh || !current.reads[slot]) {
      const pending = read();
      pending.catch(() => undefined);
      current.reads[slot] = pending;
    }
    return (await current.reads[slot]) as Awaited<NonNullable<Reads[K]>>;
  } catch (err) {
    throw new Error(
      `the cloud's ${what} could not be read: ${redact(messageOf(err), apiKey)} The cost guard passes no ` +
        "stack it cannot price: fix the connection, or disable this policy in the policy pack config.",
    );
  }
}

/** The GPU and pod catalogues: the GPU list needs the key, the pod list is public. */
export function catalogue(): Promise<Catalogue> {
  return once("price list", "catalogue", async () => {
    const [{ gpus }, { pods }] = await Promise.all([getGpus({ includeInvalid: true }), getPods()]);
    return {
      gpus: new Map(gpus.map((gpu) => [gpu.gpuUuid, gpu])),
      pods: new Map(pods.map((pod) => [pod.podUuid, pod])),
    };
  });
}

const personalImages = (fresh = false) =>
  once(
    "personal image list",
    "personalImages",
    async () => new Map((await getPersonalImages()).images.map((i) => [i.imageUuid, i.podUuid])),
    fresh,
  );

const marketImages = () =>
  once(
    "market image list",
    "marketImages",
    async () => new Set((await getMarketImages()).images.map((i) => i.imageUuid)),
  );

/**
 * What image `imageUuid` is made from: one of the key's personal images (and its source pod), a market
 * image, or undefined when the key sees neither. A personal image the stack saved in this very run is not
 * in a list read before it: a miss reads the list again, once, shared by every miss of the moment.
 */
export async function imageSource(imageUuid: string): Promise<ImageSource | undefined> {
  const before = await personalImages();
  const podUuid = before.get(imageUuid) ?? (await freshPersonalImages(before)).get(imageUuid);
  if (podUuid !== undefined) return { kind: "personal", podUuid };
  return (await marketImages()).has(imageUuid) ? { kind: "market" } : undefined;
}

async function freshPersonalImages(stale: ReadonlyMap<string, string>): Promise<ReadonlyMap<string, string>> {
  const current = await personalImages();
  return current === stale ? personalImages(true) : current;
}

/** The key's instances whose title `marks` takes for the owner's mark of an instance that already exists. */
export async function instancesMarked(marks: (title: string) => boolean): Promise<InstanceSummary[]> {
  const all = await once("instance list", "instances", async () => (await getInstances()).instances);
  return all.filter((i) => marks(i.title));
}
