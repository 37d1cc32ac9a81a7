import * as pulumi from "@pulumi/pulumi";
import type { Gpu as RawGpu } from "../../sdk";
import { connect, lift, withClient } from "./client";
import type { DataSourceOptions, InputArgs } from "./options";
import { cachedCatalogue } from "./catalogue-cache";
import { AmbiguousMatchError, listForMessage, NoMatchError } from "./errors";
import { Currency, Price, toPrice } from "./pricing";

/** A GPU model of the catalogue. */
export interface GpuModel {
  /** Id to pass as an Instance's `gpuUuid`. */
  gpuUuid: string;
  /** Model name, e.g. `4090D`. */
  gpuName: string;
  /** 1 valid (rentable), 0 invalid. */
  status: number;
  /** True when `status` is 1. */
  valid: boolean;
  /** Price per GPU per hour, in `currency`. */
  hourlyPrice: number;
  /** The currency of the prices: always `CNY`. */
  currency: Currency;
  /** Every listed price per GPU. */
  price: Price;
}

export interface GetGpusArgs {
  /**
   * Also return invalid models (status 0).
   * @defaultValue false
   */
  includeInvalid?: boolean;
}

export interface GetGpusResult {
  /** The models in catalogue order. */
  gpus: GpuModel[];
}

export interface GetGpuArgs {
  /** Model name, e.g. `"4090D"`; matched without regard to case (see `getGpu`). */
  name: string;
  /**
   * Also consider invalid models (status 0).
   * @defaultValue false
   */
  includeInvalid?: boolean;
}

const VALID = 1;

/**
 * Lists the GPU models of the catalogue, valid ones only unless `includeInvalid` is set.
 *
 * @example
 * const { gpus } = await gpucloud.getGpus();
 * for (const gpu of gpus) console.log(gpu.gpuName, gpu.hourlyPrice, gpu.currency);
 */
export async function getGpus(args: GetGpusArgs = {}, opts?: DataSourceOptions): Promise<GetGpusResult> {
  const models = (await gpuCatalogue(opts)).map(toGpuModel);
  return { gpus: args.includeInvalid === true ? models : models.filter((m) => m.valid) };
}

/** `getGpus` over Inputs. */
export function getGpusOutput(
  args: InputArgs<GetGpusArgs> = {},
  opts?: DataSourceOptions,
): pulumi.Output<GetGpusResult> {
  return lift(getGpus, args, opts);
}

/**
 * Finds one GPU model by name. An exact match, ignoring case, wins. Failing that, the name may
 * match whole words of a longer model name (`"4090D"` finds `"RTX 4090D"`), but never part of a
 * word: `"4090"` does not find `"4090D"`, a different card at a different price. Throws
 * `NoMatchError` or `AmbiguousMatchError`, listing the models that exist.
 *
 * @example
 * const gpu = await gpucloud.getGpu({ name: "4090D" });
 * const pod = await gpucloud.getPod({ title: "ComfyUI" });
 * new gpucloud.Instance("worker", { podUuid: pod.podUuid, gpuUuid: gpu.gpuUuid, gpuNums: 1 });
 */
export async function getGpu(args: GetGpuArgs, opts?: DataSourceOptions): Promise<GpuModel> {
  if (args.name.trim() === "") {
    throw new RangeError('getGpu: name is empty; pass a GPU model name such as "4090D".');
  }
  return pickGpu((await gpuCatalogue(opts)).map(toGpuModel), args);
}

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

/** `getGpu` over Inputs. */
export function getGpuOutput(args: InputArgs<GetGpuArgs>, opts?: DataSourceOptions): pulumi.Output<GpuModel> {
  return lift(getGpu, args, opts);
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
