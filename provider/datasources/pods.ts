import { z } from "zod";
import { collect, type Pod as RawPod } from "../../sdk";
import { defineDataSource } from "../framework/define-data-source";
import type { GetPodArgs, Pod, SelectedPod } from "../generated/data-sources";
import { connect, paging, withClient } from "./client";
import type { DataSourceOptions } from "./options";
import { cachedCatalogue } from "./catalogue-cache";
import { AmbiguousMatchError, listForMessage, NoMatchError } from "./errors";
import { CURRENCY, toPrice } from "./pricing";
import { currency, price } from "./schemas";

const podFields = {
  podUuid: z.string().describe("Id to pass as an Instance's `podUuid`."),
  title: z.string().describe("The pod's title, as `getPod` matches it."),
  remark: z.string().describe("The pod's description in the catalogue."),
  tags: z.array(z.string()).describe("Every version tag, in the order the catalogue lists them."),
  latestTag: z
    .string()
    .optional()
    .describe(
      "The tag an instance gets when it is created without `podTag`; absent when the pod lists no tag.",
    ),
  hourlyPrice: z
    .number()
    .optional()
    .describe("Price per hour, in `currency`, before GPUs; absent when the catalogue lists no price."),
  currency,
  price: price.optional().describe("Every listed price; absent when the catalogue lists none."),
};

const pod = z
  .object(podFields)
  .meta({ id: "Pod", description: "A pod, an application-market template instances are created from." });

const selectedPod = z
  .object({
    tag: z.string().optional().describe("The requested tag when one was given, else `latestTag`."),
    ...podFields,
  })
  .meta({
    id: "SelectedPod",
    description: "A pod picked by `getPod`, with the tag that was asked for (or the latest).",
  });

export const getPodsSource = defineDataSource({
  name: "getPods",
  description:
    "Lists pods, every page of them, optionally filtered by the cloud's fuzzy `name` match. The pod\n" +
    "list is public: an API key is sent when one is configured but none is needed.",
  example: 'const { pods } = await gpucloud.getPods({ name: "comfy" });',
  args: z.object({
    name: z
      .string()
      .optional()
      .describe("Fuzzy name filter, applied by the cloud (the `name` query of /pod/list)."),
  }),
  result: z.object({ pods: z.array(pod).describe("The pods in catalogue order.") }),
  async read(args, opts) {
    return { pods: (await podCatalogue(opts, args.name?.trim())).map(toPod) };
  },
});

export const getPodSource = defineDataSource({
  name: "getPod",
  description:
    "Finds one pod by its exact title and, when `tag` is given, checks that the pod offers it. Throws\n" +
    "`NoMatchError` (listing the titles or tags that exist) or `AmbiguousMatchError` (several pods share\n" +
    "the title). The lookup reads the whole pod catalogue once per run, whatever the number of lookups.",
  example: [
    'const pod = await gpucloud.getPod({ title: "ComfyUI", tag: "v1.2.5" });',
    'const gpu = await gpucloud.getGpu({ name: "4090D" });',
    'new gpucloud.Instance("worker", {',
    "  podUuid: pod.podUuid,",
    "  podTag: pod.tag,",
    "  gpuUuid: gpu.gpuUuid,",
    "  gpuNums: 1,",
    "});",
  ].join("\n"),
  args: z.object({
    title: z.string().describe("The pod's exact title."),
    tag: z
      .string()
      .optional()
      .describe("A version tag the pod must offer; by default the latest tag is reported."),
  }),
  result: selectedPod,
  async read(args, opts) {
    if (args.title.trim() === "") {
      throw new RangeError("getPod: title is empty; pass the pod's exact title.");
    }
    // The whole catalogue, not the cloud's fuzzy filter: one fetch then serves every getPod of the run.
    return pickPod((await podCatalogue(opts, undefined)).map(toPod), args);
  },
});

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
