/**
 * The spec of a create: what the create call is asked for, and how a listed instance is recognised
 * as one made by such a call. The cloud's record carries the source in `image_uuid` (a pod's uuid
 * for create_by_pod) and its version in `image_tag`, beside `gpu_uuid` and `gpu_nums`.
 */
import { z } from "zod";
import type { Instance as CloudInstance } from "../../../sdk";
import type { InstanceInputs } from "./inputs";

export const CreateSpec = z
  .object({
    podUuid: z.string().optional().describe("The pod it is created from."),
    podTag: z.string().optional().describe("The pod's version, when the program names one."),
    imageUuid: z.string().optional().describe("The image it is created from, instead of a pod."),
    gpuUuid: z.string().describe("GPU model."),
    gpuNums: z.number().int().describe("Number of GPUs."),
  })
  .meta({ id: "CreateSpec", description: "What a create asked the cloud for." });
export type CreateSpec = z.infer<typeof CreateSpec>;

export function specOf(inputs: InstanceInputs): CreateSpec {
  return {
    ...(inputs.imageUuid === undefined
      ? { podUuid: inputs.podUuid, podTag: inputs.podTag }
      : { imageUuid: inputs.imageUuid }),
    gpuUuid: inputs.gpuUuid,
    gpuNums: inputs.gpuNums,
  };
}

/** Equal for equal specs: the key of the reconciler that serves them. */
export function specKey(spec: CreateSpec): string {
  return JSON.stringify([
    spec.podUuid ?? null,
    spec.podTag ?? null,
    spec.imageUuid ?? null,
    spec.gpuUuid,
    spec.gpuNums,
  ]);
}

/** The uuid the cloud reports as `image_uuid` of an instance made from this spec. */
function sourceOf(spec: CreateSpec): string {
  return (spec.imageUuid ?? spec.podUuid)!;
}

/**
 * Whether a listed instance could have been made by a create of this spec. A record that leaves out
 * one of the fields this needs could be anything, so it never matches.
 */
export function matchesSpec(cloud: CloudInstance, spec: CreateSpec): boolean {
  return (
    cloud.image_uuid === sourceOf(spec) &&
    cloud.gpu_uuid === spec.gpuUuid &&
    cloud.gpu_nums === spec.gpuNums &&
    (spec.podTag === undefined || cloud.image_tag === spec.podTag)
  );
}

/** "pod p-1 (tag v2) on 1 x GPU g-1": for messages. */
export function describeSpec(spec: CreateSpec): string {
  const source =
    spec.imageUuid !== undefined
      ? `image ${spec.imageUuid}`
      : `pod ${spec.podUuid}${spec.podTag === undefined ? "" : ` (tag ${spec.podTag})`}`;
  return `${source} on ${spec.gpuNums} x GPU ${spec.gpuUuid}`;
}

/** One input whose declared value an existing instance does not have. */
export interface SpecDifference {
  input: "podUuid" | "imageUuid" | "podTag" | "gpuUuid" | "gpuNums";
  declared: unknown;
  actual: unknown;
}

/**
 * The inputs whose declared value an existing instance does not have. A field the cloud does not
 * report is not compared: the program's value is taken on trust.
 */
export function specDifferences(cloud: CloudInstance, spec: CreateSpec): SpecDifference[] {
  const compared: SpecDifference[] = [
    {
      input: spec.imageUuid === undefined ? "podUuid" : "imageUuid",
      declared: sourceOf(spec),
      actual: cloud.image_uuid,
    },
    { input: "podTag", declared: spec.podTag, actual: cloud.image_tag },
    { input: "gpuUuid", declared: spec.gpuUuid, actual: cloud.gpu_uuid },
    { input: "gpuNums", declared: spec.gpuNums, actual: cloud.gpu_nums },
  ];
  return compared.filter(
    (d) => d.declared !== undefined && d.actual !== undefined && d.declared !== d.actual,
  );
}

/** "gpuNums is 2 in your program but 1 on the instance": for messages. */
export function describeDifference(d: SpecDifference): string {
  return `${d.input} is ${JSON.stringify(d.declared)} in your program but ${JSON.stringify(d.actual)} on the instance`;
}

/** How an existing instance differs from the spec of the program that adopts it, one phrase per input. */
export function adoptionMismatches(cloud: CloudInstance, spec: CreateSpec): string[] {
  return specDifferences(cloud, spec).map(describeDifference);
}
