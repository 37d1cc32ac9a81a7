/**
 * The prices the cost guard checks against: the cloud's GPU and pod catalogues, read once per policy
 * run with the data sources (so with the settings a program has: `gpucloud:baseUrl` / GPUCLOUD_BASE_URL,
 * `gpucloud:apiKey` / GPUCLOUD_API_KEY), and each instance priced with the data sources' one formula.
 */
import { createHash } from "node:crypto";
import Decimal from "decimal.js";
import { redact, terminalSafe } from "../../sdk";
import { connect } from "../datasources/client";
import { getGpus, type GpuModel } from "../datasources/gpus";
import { getPods, type Pod } from "../datasources/pods";
import { CURRENCY, estimateHourlyPrice } from "../datasources/pricing";
import { messageOf } from "../framework/errors";
import { firstUnknown, type InstanceFacts, type Unknown } from "./resources";

export interface PriceList {
  gpus: ReadonlyMap<string, GpuModel>;
  pods: ReadonlyMap<string, Pod>;
}

/** Where the price list comes from: the policy's `baseUrl` wins over the stack config and the environment. */
export interface PriceSource {
  baseUrl?: string;
}

/**
 * The Pulumi CLI starts a policy pack for each run, so a process is a run: every policy and every
 * resource of it shares one read per cloud and key. A failed read is kept too: a run whose catalogue
 * is down answers each of its thousand instances at once with the same failure, not after its own retries.
 */
const lists = new Map<string, Promise<PriceList>>();

/** The price list, or the reason it cannot be had, in words that never hold the API key. */
export async function priceList(source: PriceSource): Promise<PriceList> {
  let apiKey: string | undefined;
  try {
    const connection = connect(source);
    apiKey = connection.apiKey;
    const id = createHash("sha256").update(`${connection.baseUrl}\n${apiKey}`).digest("hex");
    let pending = lists.get(id);
    if (!pending) {
      pending = readPriceList(source);
      pending.catch(() => undefined);
      lists.set(id, pending);
    }
    return await pending;
  } catch (err) {
    throw new Error(
      `the cloud's price list could not be read: ${redact(messageOf(err), apiKey)} The cost guard ` +
        "passes no stack it cannot price: fix the connection, or disable this policy in the policy pack config.",
    );
  }
}

async function readPriceList(source: PriceSource): Promise<PriceList> {
  // The GPU list needs the key; the pod list is public. Invalid GPU models are kept: an instance of one still bills.
  const [{ gpus }, { pods }] = await Promise.all([
    getGpus({ includeInvalid: true }, source),
    getPods({}, source),
  ]);
  return {
    gpus: new Map(gpus.map((gpu) => [gpu.gpuUuid, gpu])),
    pods: new Map(pods.map((pod) => [pod.podUuid, pod])),
  };
}

/** One instance's hourly price and how it was made, for messages. */
export interface InstancePrice {
  name: string;
  urn: string;
  amount: Decimal;
  /** e.g. `pod ComfyUI 0.2 + 4090D 1.88 × 2`. */
  basis: string;
}

/** The price of an instance, an Unknown while a preview does not know what it is made of, or why it has none. */
export type Priced = InstancePrice | Unknown | { problem: string };

/** Prices an instance from the list: pod price + GPU price × gpuNums (an image-based instance has no pod price). */
export function priceOf(instance: InstanceFacts, list: PriceList): Priced {
  const { podUuid, imageUuid, gpuUuid, gpuNums } = instance;
  const unknown = firstUnknown(podUuid, imageUuid, gpuUuid, gpuNums);
  if (unknown) return unknown;
  const problem = (why: string) => ({ problem: `"${instance.name}" cannot be priced: ${why}` });
  const gpu = list.gpus.get(gpuUuid as string);
  if (!gpu) return problem("its gpuUuid is not a GPU model of the cloud's catalogue.");
  const pod =
    typeof podUuid === "string" ? list.pods.get(podUuid) : { hourlyPrice: 0, currency: CURRENCY, title: "" };
  if (!pod) return problem("its podUuid is not a pod of the cloud's catalogue.");
  try {
    const estimate = estimateHourlyPrice({ pod, gpu, gpuNums: gpuNums as number });
    // A violation message quotes the basis: the catalogue's names are shown escaped.
    const podPart =
      typeof podUuid === "string" ? `pod ${terminalSafe(pod.title)} ${pod.hourlyPrice}` : "image";
    return {
      name: instance.name,
      urn: instance.urn,
      amount: new Decimal(estimate.amount),
      basis: `${podPart} + ${terminalSafe(gpu.gpuName)} ${gpu.hourlyPrice} × ${String(gpuNums)}`,
    };
  } catch (err) {
    return problem(messageOf(err).replace(/^estimateHourlyPrice: /, ""));
  }
}

/** `2.08 CNY/h`. */
export function perHour(amount: Decimal | number): string {
  return `${new Decimal(amount).toString()} ${CURRENCY}/h`;
}
