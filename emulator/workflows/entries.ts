/**
 * The workflows room's published workflows: the manifest schemas, and a `--seed FILE` workflow entry, which
 * has the fields /workflow/market/info returns (the list call shows too little to run one) plus the
 * emulator's own pricing of a run.
 */
import { z } from "zod";
import { choice, decimal, nonEmpty } from "../core/state/schema";
import type { MediaType } from "../assets/media-types";

/** value_type (and its accepted aliases) to the media kind it takes (docs/design/cloud-api.md#workflow-detail). */
export const MEDIA_VALUE_TYPES = new Map<string, MediaType>([
  ["image_input", "image"],
  ["image", "image"],
  ["video_input", "video"],
  ["video", "video"],
  ["audio_input", "audio"],
  ["audio", "audio"],
  ["file_input", "file"],
  ["file", "file"],
]);
/** The GPU models a workflow revision runs on, as /workflow/market/info reports them. */
export const WORKFLOW_GPU_MODELS = ["4080", "4090D", "5090"] as const;

export const SCALAR_VALUE_TYPES = ["string", "int", "float", "bool"] as const;
const VALUE_TYPES = [...SCALAR_VALUE_TYPES, ...MEDIA_VALUE_TYPES.keys()];

const uiSchema = z.strictObject({
  control: choice(["select", "input"]),
  options_source: z.string().default(""),
  options: z
    .array(z.strictObject({ label: z.string(), value: z.union([z.string(), z.number(), z.boolean()]) }))
    .default([]),
});
export type UiSchema = z.infer<typeof uiSchema>;

export const manifestEntrySchema = z
  .strictObject({
    name: nonEmpty,
    display_name: z.string().default(""),
    description: z.string().default(""),
    value_type: z.string().refine((v) => VALUE_TYPES.includes(v), {
      message: `must be one of ${VALUE_TYPES.join(", ")}`,
    }),
    required: z.boolean().default(false),
    default_value: z.unknown().default(""),
    ui_schema: uiSchema.optional(),
    bindings: z
      .array(z.strictObject({ node_id: z.string(), field: z.string(), binding_type: z.string() }))
      .default([]),
    sort_order: z.int().default(0),
  })
  .refine((entry) => entry.ui_schema?.control !== "select" || entry.ui_schema.options.length > 0, {
    path: ["ui_schema", "options"],
    message: "a select control needs at least one option",
  });
export type ManifestEntry = z.infer<typeof manifestEntrySchema>;

export const outputEntrySchema = z.strictObject({
  name: nonEmpty,
  type: choice(["image", "video", "audio"]),
  description: z.string().default(""),
  node_id: z.string().default(""),
  output_key: z.string().default(""),
  file_index: z.int().min(0).default(0),
  history_count: z.int().min(0).default(1),
  sort_order: z.int().default(0),
});
export type OutputEntry = z.infer<typeof outputEntrySchema>;

export interface WorkflowRevision {
  revision_id: string;
  /** Absent on old revisions, which then report `4080` (docs/design/cloud-api.md#workflow-detail). */
  gpu_model?: string;
  quote_amount: string;
  /** Actual compute price per simulated second of running; settlement multiplies it by the running time. */
  compute_rate_per_second: string;
  /** Billed on success of a workflow that may incur external model cost. */
  external_model_cost: string;
  parameters: ManifestEntry[];
  outputs: OutputEntry[];
}

export interface WorkflowDefinition {
  workflow_id: string;
  title: string;
  description: string;
  tags: string[];
  covers: string[];
  owner: { user_id: string; display_name: string };
  /**
   * Visible to everyone; a non-public workflow is visible to its owner only
   * (docs/design/cloud-api.md#workflow-detail).
   */
  public: boolean;
  may_incur_external_model_cost: boolean;
  external_cost_notice: string;
  updated_at: number;
  current_revision_id: string;
  revisions: WorkflowRevision[];
}

const isoTime = z.iso.datetime({
  offset: true,
  message: "must be an ISO 8601 time, e.g. 2026-01-01T00:00:00Z",
});

/** A `--seed FILE` workflow: one published revision, as /workflow/market/info shows it. */
export const workflowSeedEntrySchema = z
  .strictObject({
    workflow_id: nonEmpty,
    revision_id: nonEmpty,
    title: nonEmpty,
    description: z.string().default(""),
    tags: z.array(z.string()).default([]),
    covers: z.array(z.string()).default([]),
    owner: z.strictObject({ user_id: nonEmpty, display_name: z.string().default("") }),
    /** As /workflow/market/info answers it, so that an answer can be a seed entry as it is. */
    quote_currency: z
      .literal("CNY", { message: 'must be "CNY", the only currency quotes are in' })
      .optional(),
    quote_amount: decimal,
    /** The API reports no other models (docs/design/cloud-api.md#workflow-detail); absent, it reports 4080. */
    gpu_model: choice(WORKFLOW_GPU_MODELS).optional(),
    may_incur_external_model_cost: z.boolean().default(false),
    external_cost_notice: z.string().default(""),
    editable_parameter_manifest: z.array(manifestEntrySchema),
    candidate_output_manifest: z.array(outputEntrySchema).min(1),
    updated_at: isoTime.default("2026-01-01T00:00:00Z"),
    /** The emulator's own fields: who sees it, and what a run actually costs. */
    public: z.boolean().default(true),
    compute_rate_per_second: decimal.default("0"),
    external_model_cost: decimal.default("0"),
  })
  .transform((entry): WorkflowDefinition => ({
    workflow_id: entry.workflow_id,
    title: entry.title,
    description: entry.description,
    tags: entry.tags,
    covers: entry.covers,
    owner: entry.owner,
    public: entry.public,
    may_incur_external_model_cost: entry.may_incur_external_model_cost,
    external_cost_notice: entry.external_cost_notice,
    updated_at: Math.floor(Date.parse(entry.updated_at) / 1000),
    current_revision_id: entry.revision_id,
    revisions: [
      {
        revision_id: entry.revision_id,
        ...(entry.gpu_model === undefined ? {} : { gpu_model: entry.gpu_model }),
        quote_amount: entry.quote_amount,
        compute_rate_per_second: entry.compute_rate_per_second,
        external_model_cost: entry.external_model_cost,
        parameters: entry.editable_parameter_manifest,
        outputs: entry.candidate_output_manifest,
      },
    ],
  }));
