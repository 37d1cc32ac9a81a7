import { readFileSync } from "node:fs";
import { z } from "zod";
import { gpuModelSchema, marketImageSchema, podSchema, uniqueList } from "../catalogue/entries";
import { BUILT_IN_CATALOGUE, type Catalogue } from "../catalogue/store";
import { type VideoModel, VIDEO_MODELS, videoModelSchema } from "../model-runs/models";
import type { WorkflowDefinition } from "../workflows/entries";
import { workflowSeedEntrySchema } from "../workflows/entries";
import { SEED_WORKFLOWS } from "../workflows/seed";
import { parseState, StateProblem } from "./state-schema";

/** Everything an emulator serves that is not state: reset goes back to it. */
export interface Seed {
  catalogue: Catalogue;
  workflows: readonly WorkflowDefinition[];
  videoModels: readonly VideoModel[];
}

export const BUILT_IN_SEED: Seed = {
  catalogue: BUILT_IN_CATALOGUE,
  workflows: SEED_WORKFLOWS,
  videoModels: VIDEO_MODELS,
};

/**
 * A `--seed FILE` (docs/design/contracts.md#more-options-and-faults): each list replaces the built-in one, in
 * the API's own field names; a list left out keeps the built-in one. Unknown top-level keys are refused, so a
 * typo is not a silently ignored list.
 */
const seedFileSchema = z
  .object({
    gpus: uniqueList(gpuModelSchema, (g) => g.gpu_uuid, "gpu_uuid"),
    pods: uniqueList(podSchema, (p) => p.uuid, "uuid"),
    market_images: uniqueList(marketImageSchema, (i) => i.uuid, "uuid"),
    workflows: uniqueList(workflowSeedEntrySchema, (w) => w.workflow_id, "workflow_id"),
    video_models: uniqueList(videoModelSchema, (m) => m.model, "model"),
  })
  .partial()
  .strict();

/** A seed file the emulator cannot start from; the message names the file, the entry and the field. */
export class SeedFileError extends Error {
  constructor(path: string, problem: string) {
    super(`seed file ${path} ${problem}`);
    this.name = "SeedFileError";
  }
}

export function loadSeedFile(path: string): Seed {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new SeedFileError(
      path,
      `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new SeedFileError(path, "is not valid JSON");
  }
  let seed: z.infer<typeof seedFileSchema>;
  try {
    seed = parseState(seedFileSchema, json);
  } catch (problem) {
    if (problem instanceof StateProblem) throw new SeedFileError(path, `is refused: ${problem.message}`);
    throw problem;
  }
  return {
    catalogue: {
      gpus: seed.gpus ?? BUILT_IN_SEED.catalogue.gpus,
      pods: seed.pods ?? BUILT_IN_SEED.catalogue.pods,
      market_images: seed.market_images ?? BUILT_IN_SEED.catalogue.market_images,
    },
    workflows: seed.workflows ?? BUILT_IN_SEED.workflows,
    videoModels: seed.video_models ?? BUILT_IN_SEED.videoModels,
  };
}
