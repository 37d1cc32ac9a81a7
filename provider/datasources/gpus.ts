import { z } from "zod";
import type { Gpu as RawGpu } from "../../sdk";
import { defineDataSource } from "../framework/define-data-source";
import type { GetGpuArgs, GpuModel } from "../generated/data-sources";
import { connect, withClient } from "./client";
import type { DataSourceOptions } from "./options";
import { cachedCatalogue } from "./catalogue-cache";
import { AmbiguousMatchError, listForMessage, NoMatchError } from "./errors";
import { toPrice } from "./pricing";
import { currency, price } from "./schemas";

const gpuModel = z
  .object({
    gpuUuid: z.string().describe("Id to pass as an Instance's `gpuUuid`."),
    gpuName: z.string().describe("Model name, e.g. `4090D`."),
    status: z.number().describe("1 valid (rentable), 0 invalid."),
    valid: z.boolean().describe("True when `status` is 1."),
    hourlyPrice: z.number().describe("Price per GPU per hour, in `currency`."),
    currency,
    price: price.describe("Every listed price per GPU."),
  })
  .meta({ id: "GpuModel", description: "A GPU model of the catalogue." });

const includeInvalid = (what: string) => z.boolean().default(false).describe(what);

const VALID = 1;

export const getGpusSource = defineDataSource({
  name: "getGpus",
  description: "Lists the GPU models of the catalogue, valid ones only unless `includeInvalid` is set.",
  example: [
    "const { gpus } = await gpucloud.getGpus();",
    "for (const gpu of gpus) console.log(gpu.gpuName, gpu.hourlyPrice, gpu.currency);",
  ].join("\n"),
  args: z.object({ includeInvalid: includeInvalid("Also return invalid models (status 0).") }),
  result: z.object({ gpus: z.array(gpuModel).describe("The models in catalogue order.") }),
  async read(args, opts) {
    const models = (await gpuCatalogue(opts)).map(toGpuModel);
    return { gpus: args.includeInvalid ? models : models.filter((m) => m.valid) };
  },
});

export const getGpuSource = defineDataSource({
  name: "getGpu",
  description:
    "Finds one GPU model by name. An exact match, ignoring case, wins. Failing that, the name may\n" +
    'match whole words of a longer model name (`"4090D"` finds `"RTX 4090D"`), but never part of a\n' +
    'word: `"4090"` does not find `"4090D"`, a different card at a different price. Throws\n' +
    "`NoMatchError` or `AmbiguousMatchError`, listing the models that exist.",
  example: [
    'const gpu = await gpucloud.getGpu({ name: "4090D" });',
    'const pod = await gpucloud.getPod({ title: "ComfyUI" });',
    'new gpucloud.Instance("worker", { podUuid: pod.podUuid, gpuUuid: gpu.gpuUuid, gpuNums: 1 });',
  ].join("\n"),
  args: z.object({
    name: z.string().describe('Model name, e.g. `"4090D"`; matched without regard to case (see `getGpu`).'),
    includeInvalid: includeInvalid("Also consider invalid models (status 0)."),
  }),
  result: gpuModel,
  async read(args, opts) {
    if (args.name.trim() === "") {
      throw new RangeError('getGpu: name is empty; pass a GPU model name such as "4090D".');
    }
    return pickGpu((await gpuCatalogue(opts)).map(toGpuModel), args);
  },
});

/** The choice `getGpu` makes among catalogue models, apart from fetching them. */
export function pickGpu(all: GpuModel[], args: GetGpuArgs): GpuModel {
  const wanted = args.name.trim();
  const candidates = args.includeInvalid === true ? all : all.filter((m) => m.valid);
  const matches = matchGpuName(candidates, wanted);
  if (matches.length === 1) {
    return matches[0];
  }
  const scope = args.includeInvalid === true ? "GPU models" : "valid GPU models";
  const names = candidates.map((m) => m.gpuName);
  if (matches.length > 1) {
    throw new AmbiguousMatchError(
      `getGpu: "${wanted}" matches ${matches.length} ${scope}: ` +
        `${listForMessage(matches.map(describe))}. Pass the full model name.`,
      names,
    );
  }
  const invalidHit =
    args.includeInvalid === true
      ? []
      : matchGpuName(
          all.filter((m) => !m.valid),
          wanted,
        );
  const hint =
    invalidHit.length > 0
      ? ` "${wanted}" exists but is invalid (status 0); pass includeInvalid: true to select it anyway.`
      : "";
  throw new NoMatchError(
    `getGpu: no GPU model named "${wanted}" among the ${scope}: ${listForMessage(names)}.${hint}`,
    names,
  );
}

function gpuCatalogue(opts: DataSourceOptions | undefined): Promise<RawGpu[]> {
  const connection = connect(opts);
  // /gpu/list takes no parameters and has no pages (docs/design/cloud-api.md#catalogues).
  // /gpu/list needs a key (unlike the public pod and market lists), so its answer belongs to the key.
  return cachedCatalogue(
    { baseUrl: connection.baseUrl, endpoint: "/gpu/list", caller: connection.apiKey },
    () => withClient(connection, async (client) => (await client.catalogue.gpus()).gpu_list),
  );
}

function toGpuModel(raw: RawGpu): GpuModel {
  const price = toPrice(raw.price);
  return {
    gpuUuid: raw.gpu_uuid,
    gpuName: raw.gpu_name,
    status: raw.status,
    valid: raw.status === VALID,
    hourlyPrice: price.hour,
    currency: price.currency,
    price,
  };
}

/**
 * Models whose name is `wanted` ignoring case; when none is, those whose name contains `wanted` as
 * whole words. The API names models only by gpu_name, so the rule is ours.
 */
export function matchGpuName<T extends { gpuName: string }>(models: T[], wanted: string): T[] {
  const exact = models.filter((m) => m.gpuName.trim().toLowerCase() === wanted.toLowerCase());
  if (exact.length > 0) {
    return exact;
  }
  const wantedWords = words(wanted);
  return models.filter((m) => containsRun(words(m.gpuName), wantedWords));
}

function words(name: string): string[] {
  return name
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "");
}

function containsRun(haystack: string[], needle: string[]): boolean {
  if (needle.length === 0) {
    return false;
  }
  for (let start = 0; start + needle.length <= haystack.length; start++) {
    if (needle.every((word, i) => haystack[start + i] === word)) {
      return true;
    }
  }
  return false;
}

function describe(model: GpuModel): string {
  return `${model.gpuName} (${model.gpuUuid}${model.valid ? "" : ", invalid"})`;
}
