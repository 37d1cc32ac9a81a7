import * as pulumi from "@pulumi/pulumi";
import {
  collect,
  type MarketImage as RawMarketImage,
  type PersonalImage as RawPersonalImage,
} from "../../sdk";
import { connect, lift, liftCall, paging, withClient } from "./client";
import type { DataSourceOptions, InputArgs } from "./options";
import { cachedCatalogue } from "./catalogue-cache";
import { withDefined } from "./shape";

/** Versions of the software a market image ships; a component the image lacks is an empty string. */
export interface ImageComponents {
  /** CUDA version, e.g. `12.4`. */
  cuda: string;
  /** PaddlePaddle version. */
  paddlePaddle: string;
  /** PyTorch version. */
  pyTorch: string;
  /** Python version, e.g. `3.11`. */
  python: string;
  /** TensorFlow version. */
  tensorFlow: string;
  /** Ubuntu version. */
  ubuntu: string;
}

/** A public market image. */
export interface MarketImage {
  /** Id to pass as an Instance's `imageUuid`. */
  imageUuid: string;
  /** The software it ships, by version. */
  components: ImageComponents;
  /** Image size in bytes, when listed. */
  sizeBytes?: number;
  /** Unix seconds, when listed. */
  createdAt?: number;
  /** Unix seconds, when listed. */
  updatedAt?: number;
}

export interface GetMarketImagesArgs {
  /** Only images with this CUDA version (the `cuda_version` query, matched by the cloud). */
  cudaVersion?: string;
  /** Only images with this Python version (the `python_version` query, matched by the cloud). */
  pythonVersion?: string;
}

export interface GetMarketImagesResult {
  /** The matching images, in the order the cloud lists them. */
  images: MarketImage[];
}

/** One of the caller's own saved images. */
export interface PersonalImageSummary {
  /** Id to pass as an Instance's `imageUuid` or a PersonalImage's adopted id. */
  imageUuid: string;
  /** The image's title. */
  title: string;
  /** The image's remark. */
  remark: string;
  /** How many layers the image has, when listed. */
  layerCount?: number;
  /** Size in GB, when listed. */
  sizeGb?: number;
  /** The pod the image was saved from ("" when not listed). */
  podUuid: string;
  /** The version of that pod ("" when not listed). */
  podTag: string;
  /** 1 uploading, 2 saved, 3 failed. */
  saveImageStatus?: number;
  /** `saveImageStatus` by name: `uploading`, `saved`, `failed`, or `unknown` when not listed. */
  saveImageStatusName: "uploading" | "saved" | "failed" | "unknown";
  /** Unix seconds, when listed. */
  createTime?: number;
}

export interface GetPersonalImagesResult {
  /** Every personal image of the caller. */
  images: PersonalImageSummary[];
}

/**
 * Lists public market images, every page, optionally filtered by CUDA and Python version. The
 * market image list is public: an API key is sent when one is configured but none is needed.
 *
 * @example
 * const { images } = await gpucloud.getMarketImages({ cudaVersion: "12.4", pythonVersion: "3.11" });
 */
export async function getMarketImages(
  args: GetMarketImagesArgs = {},
  opts?: DataSourceOptions,
): Promise<GetMarketImagesResult> {
  const connection = connect(opts, false);
  const pages = paging(opts);
  const filters = {
    cuda_version: blankToUndefined(args.cudaVersion),
    python_version: blankToUndefined(args.pythonVersion),
  };
  const raw = await cachedCatalogue(
    { baseUrl: connection.baseUrl, endpoint: "/image/market/list", filters },
    () =>
      withClient(connection, (client) =>
        collect(client.catalogue.marketImagesAll(definedOnly(filters), pages)),
      ),
  );
  return { images: raw.map(toMarketImage) };
}

/** `getMarketImages` over Inputs. */
export function getMarketImagesOutput(
  args: InputArgs<GetMarketImagesArgs> = {},
  opts?: DataSourceOptions,
): pulumi.Output<GetMarketImagesResult> {
  return lift(getMarketImages, args, opts);
}

/**
 * Lists the caller's personal images. Never cached: a program may save images while it runs, and
 * each call reads the cloud afresh.
 *
 * @example
 * const { images } = await gpucloud.getPersonalImages();
 * const saved = images.filter((i) => i.saveImageStatus === 2);
 */
export async function getPersonalImages(opts?: DataSourceOptions): Promise<GetPersonalImagesResult> {
  const raw = await withClient(connect(opts), async (client) => (await client.images.list()).image_list);
  return { images: raw.map(toPersonalImage) };
}

/** `getPersonalImages` as an Output. */
export function getPersonalImagesOutput(opts?: DataSourceOptions): pulumi.Output<GetPersonalImagesResult> {
  return liftCall(() => getPersonalImages(opts));
}

function toMarketImage(raw: RawMarketImage): MarketImage {
  const c = raw.components ?? {};
  return withDefined({
    imageUuid: raw.uuid,
    components: {
      cuda: c.CUDA ?? "",
      paddlePaddle: c.PaddlePaddle ?? "",
      pyTorch: c.PyTorch ?? "",
      python: c.Python ?? "",
      tensorFlow: c.TensorFlow ?? "",
      ubuntu: c.Ubuntu ?? "",
    },
    sizeBytes: raw.size,
    createdAt: raw.created_at,
    updatedAt: raw.updated_at,
  });
}

const SAVE_STATUS_NAMES: Record<number, PersonalImageSummary["saveImageStatusName"]> = {
  1: "uploading",
  2: "saved",
  3: "failed",
};

function toPersonalImage(raw: RawPersonalImage): PersonalImageSummary {
  const status = raw.save_image_status;
  return withDefined({
    imageUuid: raw.uuid,
    title: raw.title ?? "",
    remark: raw.remark ?? "",
    layerCount: raw.layer_count,
    sizeGb: raw.size,
    podUuid: raw.pod_uuid ?? "",
    podTag: raw.pod_tag ?? "",
    saveImageStatus: status,
    saveImageStatusName: (status !== undefined ? SAVE_STATUS_NAMES[status] : undefined) ?? "unknown",
    createTime: raw.create_time,
  });
}

function blankToUndefined(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === "" ? undefined : trimmed;
}

function definedOnly<T extends Record<string, string | undefined>>(
  filters: T,
): Partial<Record<keyof T, string>> {
  return withDefined(filters) as Partial<Record<keyof T, string>>;
}
