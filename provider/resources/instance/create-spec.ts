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

/**
 * How an existing instance differs from the spec of the program that adopts it, one phrase per input
 * ("gpuNums is 2 in your program but 1 on the instance"). A field the cloud does not report is not
 * compared: the program's value is taken on trust.
 */
export function adoptionMismatches(cloud: CloudInstance, spec: CreateSpec): string[] {
  const differs = (input: string, declared: unknown, actual: unknown) =>
    declared !== undefined && actual !== undefined && declared !== actual
      ? [
          `${input} is ${JSON.stringify(declared)} in your program but ${JSON.stringify(actual)} on the instance`,
        ]
      : [];
  return [
    ...differs(spec.imageUuid === undefined ? "podUuid" : "imageUuid", sourceOf(spec), cloud.image_uuid),
    ...differs("podTag", spec.podTag, cloud.image_tag),
    ...differs("gpuUuid", spec.gpuUuid, cloud.gpu_uuid),
    ...differs("gpuNums", spec.gpuNums, cloud.gpu_nums),
  ];
}
