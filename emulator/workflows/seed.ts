/**
 * Seeded published workflows (docs/design/contracts.md#seed-catalogue): between them their manifests use
 * every value_type and alias, select controls with string, number and boolean options, and required media
 * inputs; one may incur external model cost. Seed ids are stable across resets.
 */

import { seedPart } from "../core/state/seed";
import { uniqueList } from "../core/state/schema";
import {
  type ManifestEntry,
  type UiSchema,
  type WorkflowDefinition,
  type WorkflowRevision,
  workflowSeedEntrySchema,
} from "./entries";

/** Old revisions name no GPU model and report `4080` (docs/design/cloud-api.md#workflow-detail). */
export function gpuModelOf(revision: WorkflowRevision): string {
  return revision.gpu_model ?? "4080";
}

function param(
  name: string,
  value_type: string,
  required: boolean,
  default_value: unknown,
  sort_order: number,
  description: string,
  ui_schema?: UiSchema,
): ManifestEntry {
  const entry: ManifestEntry = {
    name,
    display_name: name.replace(/_/g, " ").replace(/^\w/, (c) => c.toUpperCase()),
    description,
    value_type,
    required,
    default_value,
    bindings: [{ node_id: `node_${name}`, field: name, binding_type: "input" }],
    sort_order,
  };
  if (ui_schema) entry.ui_schema = ui_schema;
  return entry;
}

function select(options_source: string, options: UiSchema["options"]): UiSchema {
  return { control: "select", options_source, options };
}

const CDN = "https://cdn.gpucloud-emulator.invalid";

const portraitCurrent: WorkflowRevision = {
  revision_id: "rev_portrait_studio_2",
  gpu_model: "4090D",
  quote_amount: "0.50000000",
  compute_rate_per_second: "0.01500000",
  external_model_cost: "0.00000000",
  parameters: [
    param(
      "prompt",
      "string",
      true,
      "a studio portrait, soft light",
      1,
      "What to draw; refer to images with @label.",
    ),
    param("reference_image", "image_input", true, "", 2, "The face to keep."),
    param("style_image", "image", false, "", 3, "Optional style reference."),
    param("negative_prompt", "string", false, "", 4, "What to avoid."),
    param("steps", "int", false, 30, 5, "Sampling steps."),
    param("cfg_scale", "float", false, 7.5, 6, "Prompt adherence."),
    param("hires_fix", "bool", false, false, 7, "Upscale in a second pass."),
    param(
      "sampler",
      "string",
      false,
      "euler",
      8,
      "Sampler.",
      select("ksampler.sampler_name", [
        { label: "Euler", value: "euler" },
        { label: "DPM++ 2M", value: "dpmpp_2m" },
      ]),
    ),
    param(
      "batch_size",
      "int",
      false,
      1,
      9,
      "Images per run.",
      select("latent.batch_size", [
        { label: "One", value: 1 },
        { label: "Two", value: 2 },
        { label: "Four", value: 4 },
      ]),
    ),
    param("mask_file", "file_input", false, "", 10, "Optional inpainting mask archive."),
    param("metadata", "file", false, "", 11, "Optional JSON metadata."),
  ],
  outputs: [
    {
      name: "portrait",
      type: "image",
      description: "The finished portrait.",
      node_id: "save_image_1",
      output_key: "images",
      file_index: 0,
      history_count: 1,
      sort_order: 1,
    },
  ],
};

const portraitFirst: WorkflowRevision = {
  revision_id: "rev_portrait_studio_1",
  quote_amount: "0.40000000",
  compute_rate_per_second: "0.01000000",
  external_model_cost: "0.00000000",
  parameters: [portraitCurrent.parameters[0], portraitCurrent.parameters[1], portraitCurrent.parameters[4]],
  outputs: portraitCurrent.outputs,
};

const remixCurrent: WorkflowRevision = {
  revision_id: "rev_video_remix_3",
  gpu_model: "5090",
  quote_amount: "1.20000000",
  compute_rate_per_second: "0.02000000",
  external_model_cost: "0.40000000",
  parameters: [
    param("prompt", "string", true, "", 1, "How to remix; refer to media with @label or {{label}}."),
    param("source_video", "video_input", true, "", 2, "The clip to remix."),
    param("motion_clip", "video", false, "", 3, "Optional motion reference."),
    param("soundtrack", "audio_input", false, "", 4, "Optional music."),
    param("voice_sample", "audio", false, "", 5, "Optional voice to clone."),
    param("subtitles", "file_input", false, "", 6, "Optional subtitle file."),
    param("keyframe", "image_input", false, "", 7, "Optional key frame."),
    param(
      "duration",
      "int",
      true,
      5,
      8,
      "Output length in seconds.",
      select("video_model.duration", [
        { label: "5 s", value: 5 },
        { label: "10 s", value: 10 },
      ]),
    ),
    param(
      "fps",
      "float",
      false,
      24,
      9,
      "Frames per second.",
      select("video_model.fps", [
        { label: "24", value: 24 },
        { label: "29.97", value: 29.97 },
      ]),
    ),
    param(
      "loop",
      "bool",
      false,
      false,
      10,
      "Loop the result.",
      select("video_model.loop", [
        { label: "Loop", value: true },
        { label: "Play once", value: false },
      ]),
    ),
    param("strength", "float", false, 0.6, 11, "How far to move from the source."),
    param("seed", "int", false, 42, 12, "Random seed."),
    param("enhance", "bool", false, true, 13, "Sharpen the result."),
  ],
  outputs: [
    {
      name: "remix",
      type: "video",
      description: "The remixed video.",
      node_id: "video_combine_1",
      output_key: "videos",
      file_index: 0,
      history_count: 1,
      sort_order: 1,
    },
    {
      name: "voice_over",
      type: "audio",
      description: "The generated voice-over track.",
      node_id: "tts_1",
      output_key: "audio",
      file_index: 0,
      history_count: 1,
      sort_order: 2,
    },
  ],
};

const sketch: WorkflowRevision = {
  revision_id: "rev_team_sketch_1",
  gpu_model: "4080",
  quote_amount: "0.20000000",
  compute_rate_per_second: "0.00500000",
  external_model_cost: "0.00000000",
  parameters: [param("prompt", "string", true, "", 1, "What to sketch.")],
  outputs: [portraitCurrent.outputs[0]],
};

export const SEED_WORKFLOWS: readonly WorkflowDefinition[] = [
  {
    workflow_id: "wf_portrait_studio",
    title: "Portrait Studio",
    description: "Studio-quality portraits from one reference photo.",
    tags: ["image", "portrait"],
    covers: [`${CDN}/covers/portrait-studio.png`],
    owner: { user_id: "gpucloud", display_name: "GPU Cloud Labs" },
    public: true,
    may_incur_external_model_cost: false,
    external_cost_notice: "",
    updated_at: 1767225600,
    current_revision_id: portraitCurrent.revision_id,
    revisions: [portraitFirst, portraitCurrent],
  },
  {
    workflow_id: "wf_video_remix",
    title: "Video Remix with Voice-over",
    description: "Restyles a clip and adds a generated voice-over through an external video model.",
    tags: ["video", "audio", "external-model"],
    covers: [`${CDN}/covers/video-remix.png`],
    owner: { user_id: "gpucloud", display_name: "GPU Cloud Labs" },
    public: true,
    may_incur_external_model_cost: true,
    external_cost_notice:
      "Calls an external video model billed on success, up to 0.40 CNY per run, on top of compute.",
    updated_at: 1767312000,
    current_revision_id: remixCurrent.revision_id,
    revisions: [remixCurrent],
  },
  {
    workflow_id: "wf_team_sketch",
    title: "Team Sketch (private)",
    description: "A non-public workflow visible to its owner only.",
    tags: ["image"],
    covers: [],
    owner: { user_id: "studio", display_name: "Studio team" },
    public: false,
    may_incur_external_model_cost: false,
    external_cost_notice: "",
    updated_at: 1767398400,
    current_revision_id: sketch.revision_id,
    revisions: [sketch],
  },
];

/** The workflows' part of a `--seed FILE`: its list of published workflows replaces the built-in one. */
export const WORKFLOWS_SEED = seedPart(
  { workflows: uniqueList(workflowSeedEntrySchema, (w) => w.workflow_id, "workflow_id") },
  (inFile): readonly WorkflowDefinition[] => inFile.workflows ?? SEED_WORKFLOWS,
);
