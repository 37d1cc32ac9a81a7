import * as pulumi from "@pulumi/pulumi";
import { collect, type Pod as RawPod } from "../../sdk";
import { connect, lift, paging, withClient } from "./client";
import type { DataSourceOptions, InputArgs } from "./options";
import { cachedCatalogue } from "./catalogue-cache";
import { AmbiguousMatchError, listForMessage, NoMatchError } from "./errors";
import { Currency, CURRENCY, Price, toPrice } from "./pricing";

/** A pod, an application-market template instances are created from. */
export interface Pod {
  /** Id to pass as an Instance's `podUuid`. */
  podUuid: string;
  /** The pod's title, as `getPod` matches it. */
  title: string;
  /** The pod's description in the catalogue. */
  remark: string;
  /** Every version tag, in the order the catalogue lists them. */
  tags: string[];
  /** The tag an instance gets when it is created without `podTag`; absent when the pod lists no tag. */
  latestTag?: string;
  /** Price per hour, in `currency`, before GPUs; absent when the catalogue lists no price. */
  hourlyPrice?: number;
  /** The currency of the prices: always `CNY`. */
  currency: Currency;
  /** Every listed price; absent when the catalogue lists none. */
  price?: Price;
}

/** A pod picked by `getPod`, with the tag that was asked for (or the latest). */
export interface SelectedPod extends Pod {
  /** The requested tag when one was given, else `latestTag`. */
  tag?: string;
}

export interface GetPodsArgs {
  /** Fuzzy name filter, applied by the cloud (the `name` query of /pod/list). */
  name?: string;
}

export interface GetPodsResult {
  /** The pods in catalogue order. */
  pods: Pod[];
}

export interface GetPodArgs {
  /** The pod's exact title. */
  title: string;
  /** A version tag the pod must offer; by default the latest tag is reported. */
  tag?: string;
}

/**
 * Lists pods, every page of them, optionally filtered by the cloud's fuzzy `name` match. The pod
 * list is public: an API key is sent when one is configured but none is needed.
 *
 * @example
 * const { pods } = await gpucloud.getPods({ name: "comfy" });
 */
export async function getPods(args: GetPodsArgs = {}, opts?: DataSourceOptions): Promise<GetPodsResult> {
  return { pods: (await podCatalogue(opts, args.name?.trim())).map(toPod) };
}

/** `getPods` over Inputs. */
export function getPodsOutput(
  args: InputArgs<GetPodsArgs> = {},
  opts?: DataSourceOptions,
): pulumi.Output<GetPodsResult> {
  return lift(getPods, args, opts);
}

/**
 * Finds one pod by its exact title and, when `tag` is given, checks that the pod offers it. Throws
 * `NoMatchError` (listing the titles or tags that exist) or `AmbiguousMatchError` (several pods share
 * the title). The lookup reads the whole pod catalogue once per run, whatever the number of lookups.
 *
 * @example
 * const pod = await gpucloud.getPod({ title: "ComfyUI", tag: "v1.2.5" });
 * const gpu = await gpucloud.getGpu({ name: "4090D" });
 * new gpucloud.Instance("worker", {
 *   podUuid: pod.podUuid,
 *   podTag: pod.tag,
 *   gpuUuid: gpu.gpuUuid,
 *   gpuNums: 1,
 * });
 */
export async function getPod(args: GetPodArgs, opts?: DataSourceOptions): Promise<SelectedPod> {
  if (args.title.trim() === "") {
    throw new RangeError("getPod: title is empty; pass the pod's exact title.");
  }
  // The whole catalogue, not the cloud's fuzzy filter: one fetch then serves every getPod of the run.
  return pickPod((await podCatalogue(opts, undefined)).map(toPod), args);
}

/** The choice `getPod` makes among catalogue pods, apart from fetching them. */
export function pickPod(pods: Pod[], args: GetPodArgs): SelectedPod {
  const title = args.title.trim();
  const matches = pods.filter((p) => p.title === title);
  if (matches.length > 1) {
    throw new AmbiguousMatchError(
      `getPod: ${matches.length} pods are titled "${title}": ${listForMessage(matches.map(describe))}. ` +
        "Pick one from getPods and use its podUuid.",
      matches.map((p) => p.podUuid),
    );
  }
  if (matches.length === 0) {
    const titles = pods.map((p) => p.title);
    const near = titles.filter((t) => t.toLowerCase().includes(title.toLowerCase()));
    const hint = near.length > 0 ? ` Did you mean ${listForMessage(near.map((t) => `"${t}"`))}?` : "";
    throw new NoMatchError(
      `getPod: no pod is titled "${title}".${hint} Pods: ${listForMessage(titles)}.`,
      titles,
    );
  }
  const pod = matches[0];
  if (args.tag === undefined) {
    return pod.latestTag === undefined ? pod : { ...pod, tag: pod.latestTag };
  }
  if (!pod.tags.includes(args.tag)) {
    throw new NoMatchError(
      `getPod: pod "${title}" has no tag "${args.tag}"; its tags are ${listForMessage(pod.tags)}.`,
      pod.tags,
    );
  }
  return { ...pod, tag: args.tag };
}

/** `getPod` over Inputs. */
export function getPodOutput(
  args: InputArgs<GetPodArgs>,
  opts?: DataSourceOptions,
): pulumi.Output<SelectedPod> {
  return lift(getPod, args, opts);
}

function podCatalogue(opts: DataSourceOptions | undefined, name: string | undefined): Promise<RawPod[]> {
  const connection = connect(opts, false);
  const pages = paging(opts);
  const filter = name === "" ? undefined : name;
  return cachedCatalogue(
    { baseUrl: connection.baseUrl, endpoint: "/pod/list", filters: { name: filter } },
    () =>
      withClient(connection, (client) =>
        collect(client.catalogue.podsAll(filter === undefined ? {} : { name: filter }, pages)),
      ),
  );
}

function toPod(raw: RawPod): Pod {
  const tags = [...(raw.pod_tag ?? [])];
  const pod: Pod = {
    podUuid: raw.uuid,
    title: raw.title,
    remark: raw.remark ?? "",
    tags,
    currency: CURRENCY,
  };
  const latest = latestTag(tags);
  if (latest !== undefined) {
    pod.latestTag = latest;
  }
  if (raw.price) {
    pod.price = toPrice(raw.price);
    pod.hourlyPrice = pod.price.hour;
  }
  return pod;
}

// The API says creation defaults to the latest tag without saying where it sits in pod_tag
// (docs/design/cloud-api.md#versioning); the emulator lists tags oldest first and creates with the last one,
// and so do we.
function latestTag(tags: string[]): string | undefined {
  return tags[tags.length - 1];
}

function describe(pod: Pod): string {
  return `${pod.podUuid} (tags ${pod.tags.join(", ") || "none"})`;
}
