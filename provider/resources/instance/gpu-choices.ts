/**
 * The GPU models an Instance may run on: `gpuUuid`, then `fallbackGpuUuids` in order
 * (docs/resources.md#gpu-fallbacks). The input and its rules, the check against the cloud's GPU
 * catalogue, and which of them an instance runs on. What happens when a model is refused is
 * gpu-fallback.ts's.
 */
import { z } from "zod";
import type { Gpu, Instance as CloudInstance } from "../../../sdk";
import { isUnknown, type CheckFailure, crossFieldRule } from "../../framework/check";
import { warn, type ProviderContext } from "../../framework/context";
import { messageOf } from "../../framework/errors";
import { cachedCatalogue } from "../../datasources/catalogue-cache";
import type { InstanceInputs } from "./inputs";

const INPUT = "fallbackGpuUuids";

export const fallbackGpuUuidsInput = z
  .array(
    z
      .string({ error: "must be a string (a GPU model uuid from getGpu)" })
      .min(1, "must not be empty (a GPU model uuid from getGpu)"),
    { error: "must be a list of GPU model uuids" },
  )
  .min(1, "must not be empty: leave fallbackGpuUuids out to use gpuUuid alone")
  .meta({ rule: "a list of at least one model; each a valid GPU model uuid of the catalogue" })
  .optional()
  .describe(
    "GPU models tried in this order after gpuUuid when the cloud refuses a model (no free cards), at create and " +
      "when a stopped instance is started. Each a valid model of the catalogue, listed once, never gpuUuid. The model " +
      "the instance runs on is runningGpuUuid; while it is gpuUuid or one of these, changing or reordering the list " +
      "plans nothing. Left out, only gpuUuid is tried.",
  );

/** The models to try, in order: gpuUuid, then the fallbacks. */
export function modelsOf(inputs: Pick<InstanceInputs, "gpuUuid" | "fallbackGpuUuids">): string[] {
  return [inputs.gpuUuid, ...(inputs.fallbackGpuUuids ?? [])];
}

const DISTINCT_RULE = "fallbackGpuUuids lists each GPU model once, and never gpuUuid's";

/**
 * No model twice: a second try of a refused model is one more refused call and nothing else. Declared on
 * the input, the rule sees the inputs untyped (their type is made of the schema that holds it).
 */
export const distinctModels = crossFieldRule<Record<string, unknown>>(DISTINCT_RULE, (i, failed) => {
  const fallbacks: unknown = i.fallbackGpuUuids;
  if (failed.has(INPUT) || !Array.isArray(fallbacks)) return [];
  const first = typeof i.gpuUuid === "string" && !isUnknown(i.gpuUuid) ? i.gpuUuid : undefined;
  const seen = new Map<string, string>(first === undefined ? [] : [[first, "gpuUuid"]]);
  const failures: CheckFailure[] = [];
  fallbacks.forEach((model: unknown, index) => {
    if (typeof model !== "string" || isUnknown(model)) return;
    const earlier = seen.get(model);
    if (earlier !== undefined) {
      failures.push({
        property: INPUT,
        reason: `${DISTINCT_RULE}: ${INPUT}[${index}] (${model}) repeats ${earlier}; remove it`,
      });
    } else seen.set(model, `${INPUT}[${index}]`);
  });
  return failures;
});

/** The GPU catalogue of this operation's settings, read once per process (the data sources share it). */
export function gpuCatalogue(ctx: ProviderContext, deadline?: number): Promise<Gpu[]> {
  return cachedCatalogue(
    { baseUrl: ctx.settings.baseUrl, endpoint: "/gpu/list", caller: ctx.settings.apiKey },
    async () => (await ctx.api.catalogue.gpus({ signal: ctx.signal, deadline })).gpu_list,
  );
}

/** How long Check waits for the catalogue before it leaves the check to the create. */
const CHECK_CATALOGUE_MS = 10_000;

/**
 * The fallbacks the catalogue does not have as valid models. Only models new to the list are checked: a
 * model that left the catalogue after the instance was made must not block every later preview. When
 * the catalogue cannot be read, Check passes and says so; the create checks again before it sends
 * anything (`assertModelsKnown`).
 */
export async function catalogueFailures(
  ctx: ProviderContext,
  inputs: Partial<InstanceInputs>,
  failed: ReadonlySet<string>,
  olds: Readonly<Record<string, unknown>>,
): Promise<CheckFailure[]> {
  const fallbacks = inputs.fallbackGpuUuids;
  if (failed.has(INPUT) || !Array.isArray(fallbacks)) return [];
  const held = Array.isArray(olds[INPUT]) ? (olds[INPUT] as unknown[]) : [];
  const fresh = fallbacks.filter((model) => !isUnknown(model) && !held.includes(model));
  if (fresh.length === 0) return [];
  let catalogue: Gpu[];
  try {
    catalogue = await gpuCatalogue(ctx, Date.now() + CHECK_CATALOGUE_MS);
  } catch (err) {
    warn(
      `${INPUT} were not checked against the GPU catalogue: reading it failed (${messageOf(err)}). ` +
        "The create checks them again before it sends anything.",
    );
    return [];
  }
  return unusable(fallbacks, fresh, catalogue).map((reason) => ({ property: INPUT, reason }));
}

/** Refuses, before any create call, fallbacks the catalogue does not have as valid models. */
export async function assertModelsKnown(ctx: ProviderContext, inputs: InstanceInputs): Promise<Gpu[]> {
  const fallbacks = inputs.fallbackGpuUuids ?? [];
  const catalogue = await gpuCatalogue(ctx);
  const problems = unusable(fallbacks, fallbacks, catalogue);
  if (problems.length > 0) {
    throw new Error(`Could not create instance: ${problems.join("; ")}. Nothing was sent to the cloud.`);
  }
  return catalogue;
}

function unusable(all: readonly string[], checked: readonly string[], catalogue: Gpu[]): string[] {
  const byUuid = new Map(catalogue.map((gpu) => [gpu.gpu_uuid, gpu]));
  return all.flatMap((model, index) => {
    if (!checked.includes(model)) return [];
    const gpu = byUuid.get(model);
    const at = `${INPUT}[${index}] (${model})`;
    if (!gpu) return [`${at} is not a GPU model of the cloud's catalogue; take one from getGpus or getGpu`];
    if (gpu.status !== 1)
      return [
        `${at} is ${gpu.gpu_name}, not available to rent now (status ${gpu.status}); pick a valid model`,
      ];
    return [];
  });
}

/**
 * The gpuUuid the state keeps: the declared one while the instance runs on a model of the list (so a
 * fallback shows no drift), the cloud's when it runs on another (so the plan replaces it).
 */
export function declaredModel(inputs: InstanceInputs, cloud: CloudInstance): string {
  const running = cloud.gpu_uuid;
  return running === undefined || modelsOf(inputs).includes(running) ? inputs.gpuUuid : running;
}

/** The inputs on the model the instance runs on, when it is one of the list: an adoption compares those. */
export function onListedModel(inputs: InstanceInputs, cloud: CloudInstance): InstanceInputs {
  const running = cloud.gpu_uuid;
  return running !== undefined && modelsOf(inputs).includes(running)
    ? { ...inputs, gpuUuid: running }
    : inputs;
}
