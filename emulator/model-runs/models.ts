/**
 * Seeded video models (DESIGN §5). Price rule: CNY per second of requested duration, by resolution;
 * the pre-deduction is that price for the request (spec "External model run": frozen_amount).
 */

export const GENERATION_CATEGORIES = [
  "text_to_video",
  "first_frame_to_video",
  "first_last_frame_to_video",
  "reference_to_video",
] as const;
export type GenerationCategory = (typeof GENERATION_CATEGORIES)[number];

export interface VideoModel {
  model: string;
  provider: string;
  endpoint: string;
  generation_categories: readonly GenerationCategory[];
  price_per_second: Readonly<Record<string, string>>;
  default_resolution: string;
  ratios: readonly string[];
  min_duration: number;
  max_duration: number;
  default_duration: number;
}

export const VIDEO_MODELS: readonly VideoModel[] = [
  {
    model: "demo-video",
    provider: "demo",
    endpoint: "videos",
    generation_categories: GENERATION_CATEGORIES,
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
