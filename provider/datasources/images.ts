import { z } from "zod";
import {
  collect,
  type MarketImage as RawMarketImage,
  type PersonalImage as RawPersonalImage,
} from "../../sdk";
import { defineDataSource } from "../framework/define-data-source";
import type { MarketImage, PersonalImageSummary } from "../generated/data-sources";
import { connect, paging, withClient } from "./client";
import { cachedCatalogue } from "./catalogue-cache";
import { withDefined } from "./shape";

const imageComponents = z
  .object({
    cuda: z.string().describe("CUDA version, e.g. `12.4`."),
    paddlePaddle: z.string().describe("PaddlePaddle version."),
    pyTorch: z.string().describe("PyTorch version."),
    python: z.string().describe("Python version, e.g. `3.11`."),
    tensorFlow: z.string().describe("TensorFlow version."),
    ubuntu: z.string().describe("Ubuntu version."),
  })
  .meta({
    id: "ImageComponents",
    description:
      "Versions of the software a market image ships; a component the image lacks is an empty string.",
  });

const marketImage = z
  .object({
    imageUuid: z.string().describe("Id to pass as an Instance's `imageUuid`."),
    components: imageComponents.describe("The software it ships, by version."),
    sizeBytes: z.number().optional().describe("Image size in bytes, when listed."),
    createdAt: z.number().optional().describe("Unix seconds, when listed."),
    updatedAt: z.number().optional().describe("Unix seconds, when listed."),
  })
  .meta({ id: "MarketImage", description: "A public market image." });

const personalImageSummary = z
  .object({
    imageUuid: z
      .string()
      .describe("Id to pass as an Instance's `imageUuid` or a PersonalImage's adopted id."),
    title: z.string().describe("The image's title."),
    remark: z.string().describe("The image's remark."),
    layerCount: z.number().optional().describe("How many layers the image has, when listed."),
    sizeGb: z.number().optional().describe("Size in GB, when listed."),
    podUuid: z.string().describe('The pod the image was saved from ("" when not listed).'),
    podTag: z.string().describe('The version of that pod ("" when not listed).'),
    saveImageStatus: z.number().optional().describe("1 uploading, 2 saved, 3 failed."),
    saveImageStatusName: z
      .enum(["uploading", "saved", "failed", "unknown"])
      .describe("`saveImageStatus` by name: `uploading`, `saved`, `failed`, or `unknown` when not listed."),
    createTime: z.number().optional().describe("Unix seconds, when listed."),
  })
  .meta({ id: "PersonalImageSummary", description: "One of the caller's own saved images." });

export const getMarketImagesSource = defineDataSource({
  name: "getMarketImages",
  description:
    "Lists public market images, every page, optionally filtered by CUDA and Python version. The\n" +
    "market image list is public: an API key is sent when one is configured but none is needed.",
  example:
    'const { images } = await gpucloud.getMarketImages({ cudaVersion: "12.4", pythonVersion: "3.11" });',
  args: z.object({
    cudaVersion: z
      .string()
      .optional()
      .describe("Only images with this CUDA version (the `cuda_version` query, matched by the cloud)."),
    pythonVersion: z
      .string()
      .optional()
      .describe("Only images with this Python version (the `python_version` query, matched by the cloud)."),
  }),
  result: z.object({
    images: z.array(marketImage).describe("The matching images, in the order the cloud lists them."),
  }),
  async read(args, opts) {
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
  },
});

export const getPersonalImagesSource = defineDataSource({
  name: "getPersonalImages",
  description:
    "Lists the caller's personal images. Never cached: a program may save images while it runs, and\n" +
    "each call reads the cloud afresh.",
  example: [
    "const { images } = await gpucloud.getPersonalImages();",
    "const saved = images.filter((i) => i.saveImageStatus === 2);",
  ].join("\n"),
  result: z.object({ images: z.array(personalImageSummary).describe("Every personal image of the caller.") }),
  async read(_args, opts) {
    const raw = await withClient(connect(opts), async (client) => (await client.images.list()).image_list);
    return { images: raw.map(toPersonalImage) };
  },
});

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
