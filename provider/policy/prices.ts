/**
 * An instance's hourly price as the cost guard plans for it: the pod's hourly price plus the GPU's hourly
 * price times gpuNums, with the data sources' one formula. An instance made from a personal image pays
 * its source pod, as the cloud bills it; one made from a market image pays its GPUs alone. What a preview
 * does not know yet, and the model a list of fallbacks lands on (chosen by the cloud at create), is
 * priced at the most it may cost, and the price says which input it priced so.
 */
import Decimal from "decimal.js";
import { GPU_NUMS, terminalSafe } from "../../sdk";
import type { GpuModel, Pod } from "../generated/data-sources";
import { CURRENCY, estimateHourlyPrice, type HourlyPriced } from "../datasources/pricing";
import { messageOf } from "../framework/errors";
import { catalogue, imageSource, type Catalogue } from "./cloud";
import { Unknown, type FleetMembership, type InstanceFacts } from "./resources";

/** One instance's hourly price and how it was made, for messages. */
export interface InstancePrice {
  name: string;
  urn: string;
  amount: Decimal;
  /** e.g. `pod ComfyUI 0.2 + 4090D 1.88 × 2`. */
  basis: string;
  /** Each input priced at the most it may cost, and how; empty when the price is exact. */
  worstCase: string[];
  /** The Fleet the instance is a member of: messages list a fleet's members together. */
  fleet?: FleetMembership;
}

/** The price of an instance, or why it has none. */
export type Priced = InstancePrice | { problem: string };

/** An instance that already exists is priced by the model it runs on (the dearest, if it may be one of several). */
export interface RunsOn {
  gpuUuids: string[];
}

const MOST_GPUS = Math.max(...GPU_NUMS);

interface PodPart extends HourlyPriced {
  label: string;
}

type Part<T> = T | { problem: string };

const isProblem = <T extends object>(part: Part<T>): part is { problem: string } => "problem" in part;

/**
 * Prices `instance`, reading the catalogue (and the image list, for an instance made from an image).
 * Rejects when the cloud cannot be read; resolves to a problem when the instance cannot be priced.
 */
export async function priceOf(instance: InstanceFacts, runsOn?: RunsOn): Promise<Priced> {
  const list = await catalogue();
  const worstCase: string[] = [];
  const problem = (why: string) => ({ problem: `"${instance.name}" cannot be priced: ${why}` });
  const pod = await podPart(instance, list, worstCase);
  if (isProblem(pod)) return problem(pod.problem);
  const gpu = runsOn ? modelItRunsOn(runsOn, list) : gpuPart(instance, list, worstCase);
  if (isProblem(gpu)) return problem(gpu.problem);
  let gpuNums = instance.gpuNums;
  if (gpuNums instanceof Unknown) {
    gpuNums = MOST_GPUS;
    worstCase.push(`gpuNums is not known until up: priced at ${MOST_GPUS}, the most the cloud takes`);
  }
  if (gpuNums === undefined) return problem("it declares no gpuNums.");
  try {
    const estimate = estimateHourlyPrice({ pod, gpu, gpuNums });
    return {
      name: instance.name,
      urn: instance.urn,
      amount: new Decimal(estimate.amount),
      // A violation message quotes the basis: the catalogue's names are shown escaped.
      basis: `${pod.label} + ${terminalSafe(gpu.gpuName)} ${gpu.hourlyPrice} × ${gpuNums}`,
      worstCase,
      ...(instance.fleet ? { fleet: instance.fleet } : {}),
    };
  } catch (err) {
    return problem(messageOf(err).replace(/^estimateHourlyPrice: /, ""));
  }
}

/** The pod part: the declared pod, an image's source pod, nothing for a market image, or the dearest pod when not known. */
async function podPart(
  instance: InstanceFacts,
  list: Catalogue,
  worstCase: string[],
): Promise<Part<PodPart>> {
  const { podUuid, imageUuid } = instance;
  if (podUuid instanceof Unknown || (podUuid === undefined && imageUuid instanceof Unknown)) {
    const input = podUuid instanceof Unknown ? "podUuid" : "imageUuid";
    const dearest = dearestPod(list);
    if (!dearest)
      return { problem: `its ${input} is not known until up, and the catalogue lists no priced pod.` };
    worstCase.push(
      `${input} is not known until up: priced at the dearest pod, ${terminalSafe(dearest.title)}`,
    );
    return podOf(dearest, "pod");
  }
  if (typeof podUuid === "string") {
    const pod = list.pods.get(podUuid);
    return pod ? podOf(pod, "pod") : { problem: "its podUuid is not a pod of the cloud's catalogue." };
  }
  if (typeof imageUuid !== "string") return { problem: "it declares neither podUuid nor imageUuid." };
  const source = await imageSource(imageUuid);
  if (!source) {
    return {
      problem:
        `its imageUuid ${terminalSafe(imageUuid)} is neither one of this API key's personal images nor a market ` +
        "image, so what the cloud bills for it is not known. Check the imageUuid and the stack's gpucloud:apiKey.",
    };
  }
  // The cloud bills a market image's instance for its GPUs alone (there is no pod behind it).
  if (source.kind === "market")
    return { label: "market image (no pod price)", hourlyPrice: 0, currency: CURRENCY };
  const pod = list.pods.get(source.podUuid);
  if (!pod) {
    return {
      problem: `its image was saved from pod ${terminalSafe(source.podUuid)}, which is not in the cloud's catalogue.`,
    };
  }
  return podOf(pod, "image of pod");
}

function podOf(pod: Pod, what: string): PodPart {
  const label = `${what} ${terminalSafe(pod.title)} ${pod.hourlyPrice ?? "(no price)"}`;
  return { label, hourlyPrice: pod.hourlyPrice, currency: pod.currency };
}

/**
 * The GPU part of an instance still to be made: the dearest of gpuUuid and its fallbacks (the cloud picks
 * the first with free cards), or the dearest valid model when one of them is not known yet.
 */
function gpuPart(instance: InstanceFacts, list: Catalogue, worstCase: string[]): Part<GpuModel> {
  const { gpuUuid, fallbackGpuUuids } = instance;
  if (gpuUuid === undefined) return { problem: "it declares no gpuUuid." };
  const named: [string, string][] = [
    ...(typeof gpuUuid === "string" ? [[gpuUuid, "its gpuUuid"] as [string, string]] : []),
    ...(Array.isArray(fallbackGpuUuids)
      ? fallbackGpuUuids.map(
          (uuid, i) => [uuid, `its fallbackGpuUuids[${i}] (${terminalSafe(uuid)})`] as [string, string],
        )
      : []),
  ];
  const models: GpuModel[] = [];
  for (const [uuid, subject] of named) {
    const model = modelOf(uuid, subject, list);
    if (isProblem(model)) return model;
    models.push(model);
  }
  const unknown = [gpuUuid, fallbackGpuUuids].some((v) => v instanceof Unknown);
  const dearest = unknown ? dearestValidModel(list) : undefined;
  if (unknown && !dearest)
    return { problem: "its GPU model is not known until up, and the catalogue lists no valid model." };
  const worst = [...models, ...(dearest ? [dearest] : [])].reduce(dearer);
  if (unknown) {
    const input = gpuUuid instanceof Unknown ? "gpuUuid" : "fallbackGpuUuids";
    worstCase.push(
      `${input} is not known until up: priced at the dearest valid GPU model, ${terminalSafe(worst.gpuName)}`,
    );
  } else if (models.length > 1) {
    worstCase.push(
      `fallbackGpuUuids: the model is chosen at create, so priced at the dearest of the list, ${terminalSafe(worst.gpuName)}`,
    );
  }
  return worst;
}

function modelItRunsOn({ gpuUuids }: RunsOn, list: Catalogue): Part<GpuModel> {
  const models: GpuModel[] = [];
  for (const uuid of gpuUuids) {
    const model = modelOf(uuid, `the model it runs on (${terminalSafe(uuid)})`, list);
    if (isProblem(model)) return model;
    models.push(model);
  }
  return models.reduce(dearer);
}

/** The catalogue's model `uuid`, or a problem saying `subject` (e.g. "its gpuUuid") is none. */
function modelOf(uuid: string, subject: string, list: Catalogue): Part<GpuModel> {
  return list.gpus.get(uuid) ?? { problem: `${subject} is not a GPU model of the cloud's catalogue.` };
}

const dearer = (a: GpuModel, b: GpuModel) => (b.hourlyPrice > a.hourlyPrice ? b : a);

/** The dearest model an instance can be created on: the cloud creates on valid models only. */
function dearestValidModel(list: Catalogue): GpuModel | undefined {
  const valid = [...list.gpus.values()].filter((m) => m.valid);
  return valid.length > 0 ? valid.reduce(dearer) : undefined;
}

/** The dearest priced pod: what any pod, or any image's source pod, costs at most. */
function dearestPod(list: Catalogue): Pod | undefined {
  const priced = [...list.pods.values()].filter((p) => p.hourlyPrice !== undefined);
  return priced.length > 0
    ? priced.reduce((a, b) => ((b.hourlyPrice as number) > (a.hourlyPrice as number) ? b : a))
    : undefined;
}

/** `2.08 CNY/h`. */
export function perHour(amount: Decimal | number): string {
  return `${new Decimal(amount).toString()} ${CURRENCY}/h`;
}

/** A price as messages list it: `2.08 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 1; worst case: ...)`. */
export function described(price: InstancePrice): string {
  const worst = price.worstCase.length > 0 ? `; worst case: ${price.worstCase.join("; ")}` : "";
  return `${perHour(price.amount)} (${price.basis}${worst})`;
}
