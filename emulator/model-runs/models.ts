/**
 * The model-runs room's video models (docs/design/contracts.md#seed-catalogue) and its part of a `--seed
 * FILE`. Price rule: CNY per second of requested duration, by resolution; the pre-deduction is that price for
 * the request (frozen_amount, docs/design/cloud-api.md#model-runs). The API has no list of models, so a
 * `--seed FILE` entry has the fields below.
 */
import { z } from "zod";
import { seedPart } from "../core/state/seed";
import { choice, decimal, nonEmpty, uniqueList } from "../core/state/schema";

export const GENERATION_CATEGORIES = [
  "text_to_video",
  "first_frame_to_video",
  "first_last_frame_to_video",
  "reference_to_video",
] as const;
export type GenerationCategory = (typeof GENERATION_CATEGORIES)[number];

export const videoModelSchema = z
  .strictObject({
    model: nonEmpty,
    provider: z.string().default(""),
    endpoint: z.string().default("videos"),
    generation_categories: z.array(choice(GENERATION_CATEGORIES)).min(1),
    price_per_second: z
      .record(nonEmpty, decimal)
      .refine((prices) => Object.keys(prices).length > 0, { message: "must price at least one resolution" }),
    default_resolution: nonEmpty,
    ratios: z.array(nonEmpty).min(1),
    min_duration: z.int().min(1),
    max_duration: z.int().min(1),
    default_duration: z.int().min(1),
  })
  .superRefine((model, ctx) => {
    if (!Object.hasOwn(model.price_per_second, model.default_resolution)) {
      ctx.addIssue({
        code: "custom",
        path: ["default_resolution"],
        message: `must be one of the priced resolutions (${Object.keys(model.price_per_second).join(", ")})`,
      });
    }
    if (model.default_duration < model.min_duration || model.default_duration > model.max_duration) {
      ctx.addIssue({
        code: "custom",
        path: ["default_duration"],
        message: `must be from min_duration (${model.min_duration}) to max_duration (${model.max_duration})`,
      });
    }
  });
export type VideoModel = z.infer<typeof videoModelSchema>;

export const VIDEO_MODELS: readonly VideoModel[] = [
  {
    model: "demo-video",
    provider: "demo",
    endpoint: "videos",
    generation_categories: [...GENERATION_CATEGORIES],
    price_per_second: { "480p": "0.05000000", "720p": "0.10000000", "1080p": "0.20000000" },
    default_resolution: "720p",
    ratios: ["16:9", "9:16", "1:1"],
    min_duration: 1,
    max_duration: 15,
    default_duration: 5,
  },
  {
    model: "swift-video-lite",
    provider: "swift",
    endpoint: "videos",
    generation_categories: ["text_to_video", "first_frame_to_video"],
    price_per_second: { "480p": "0.03000000", "720p": "0.06000000" },
    default_resolution: "480p",
    ratios: ["16:9", "9:16"],
    min_duration: 1,
    max_duration: 10,
    default_duration: 5,
  },
  {
    model: "cinema-video-pro",
    provider: "aurora",
    endpoint: "videos",
    generation_categories: ["text_to_video", "first_last_frame_to_video", "reference_to_video"],
    price_per_second: { "720p": "0.25000000", "1080p": "0.40000000" },
    default_resolution: "1080p",
    ratios: ["16:9", "9:16", "1:1"],
    min_duration: 4,
    max_duration: 12,
    default_duration: 8,
  },
];

/** The model runs' part of a `--seed FILE`: its list of video models replaces the built-in one. */
export const VIDEO_MODELS_SEED = seedPart(
  { video_models: uniqueList(videoModelSchema, (m) => m.model, "model") },
  (inFile): readonly VideoModel[] => inFile.video_models ?? VIDEO_MODELS,
);
