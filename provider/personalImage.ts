/** The PersonalImage resource: an image saved from an instance, or an adopted one (DESIGN §3). */
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { OutcomeUnknownError, type GpuCloudClient, type PersonalImage as CloudImage } from "../sdk";
import { checkInputs, exactlyOneOf, type CheckFailure } from "./check";
import { client, configure } from "./config";
import { diffInputs, type DiffRules } from "./diff";
import { shimProvider } from "./shim";
import { plainJson, serialised, type Inputs } from "./util";

export const PersonalImageInputsSchema = z.object({
  instanceUuid: z
    .string({ error: "must be a string (an instance uuid)" })
    .min(1, "must not be empty")
    .optional()
    .describe("Save this instance as a new personal image."),
  adoptImageUuid: z
    .string({ error: "must be a string (a personal image uuid)" })
    .min(1, "must not be empty")
    .optional()
    .describe("Adopt this existing personal image instead of saving one."),
  waitTimeoutSeconds: z
    .number({ error: "must be a number of seconds" })
    .int("must be a whole number of seconds")
    .positive("must be positive")
    .default(900)
    .describe("How long create waits for the image to be saved."),
});
export type PersonalImageInputs = z.output<typeof PersonalImageInputsSchema>;
export type PersonalImageArgs = Inputs<z.input<typeof PersonalImageInputsSchema>>;

export const PERSONAL_IMAGE_DIFF: DiffRules = {
  update: ["waitTimeoutSeconds"],
  replace: ["instanceUuid", "adoptImageUuid"],
};

function outputs(inputs: PersonalImageInputs, image: CloudImage): Record<string, unknown> {
  return plainJson({
    ...inputs,
    imageUuid: image.uuid,
    title: image.title ?? null,
    remark: image.remark ?? null,
    layerCount: image.layer_count ?? null,
    sizeGb: image.size ?? null,
    podUuid: image.pod_uuid ?? null,
    podTag: image.pod_tag ?? null,
    saveImageStatus: image.save_image_status ?? null,
    createTime: image.create_time ?? null,
  });
}

async function findImage(api: GpuCloudClient, imageUuid: string): Promise<CloudImage | undefined> {
  const { image_list } = await api.images.list();
  return image_list.find((i) => i.uuid === imageUuid);
}

/**
 * save_image answers without the new image's uuid (field-notes.md), so the new image is the one in the
 * private list that was not there before; saves run one at a time per process so that stays unambiguous.
 * A lost answer to save_image is followed the same way: if the save happened, its image appears.
 */
async function save(
  api: GpuCloudClient,
  inputs: PersonalImageInputs,
  pollIntervalMs: number,
): Promise<CloudImage> {
  const instanceUuid = inputs.instanceUuid!;
  return serialised("save_image", async () => {
    const before = (await api.images.list()).image_list.map((i) => i.uuid);
    try {
      await api.instances.saveImage(instanceUuid);
    } catch (err) {
      if (!(err instanceof OutcomeUnknownError)) throw err;
    }
    return api.images.waitForSaved(
      { instance_uuid: instanceUuid, excluding_image_uuids: before },
      { timeoutMs: inputs.waitTimeoutSeconds * 1000, pollIntervalMs, maxPollIntervalMs: pollIntervalMs },
    );
  });
}

async function create(inputs: PersonalImageInputs): Promise<pulumi.dynamic.CreateResult> {
  const { client: api, settings } = client();
  if (inputs.adoptImageUuid) {
    const image = await findImage(api, inputs.adoptImageUuid);
    if (!image) {
      throw new Error(
        `Could not adopt image ${inputs.adoptImageUuid}: it is not in your personal image list. Check adoptImageUuid.`,
      );
    }
    return { id: image.uuid, outs: outputs(inputs, image) };
  }
  const image = await save(api, inputs, settings.pollIntervalMs);
  return { id: image.uuid, outs: outputs(inputs, image) };
}

async function read(id: string, props: Record<string, unknown>): Promise<pulumi.dynamic.ReadResult> {
  const image = await findImage(client().client, id);
  if (!image) return { id: "", props: {} };
  const inputs = PersonalImageInputsSchema.parse(
    Object.fromEntries(Object.keys(PersonalImageInputsSchema.shape).map((k) => [k, props[k] ?? undefined])),
  );
  return { id, props: outputs(inputs, image), inputs: plainJson(inputs) };
}

export const personalImageProvider: Required<pulumi.dynamic.ResourceProvider> = {
  async configure(req) {
    configure(req.config);
  },
  async check(_olds, news) {
    return checkInputs(PersonalImageInputsSchema, news, [
      exactlyOneOf<PersonalImageInputs>(
        ["instanceUuid", "adoptImageUuid"],
        "save an instance or adopt an existing image",
      ),
    ]) as { inputs: Record<string, unknown>; failures: CheckFailure[] };
  },
  async diff(id, olds, news) {
    const adoptsThis = news.adoptImageUuid === id;
    return diffInputs(
      olds,
      adoptsThis ? { ...news, adoptImageUuid: olds.adoptImageUuid } : news,
      PERSONAL_IMAGE_DIFF,
    );
  },
  create: (inputs) => create(inputs as PersonalImageInputs),
  read,
  async update(id, _olds, news) {
    const image = await findImage(client().client, id);
    if (!image)
      throw new Error(
        `Could not update image ${id}: it is no longer in your personal image list. Run a refresh.`,
      );
    return { outs: outputs(news as PersonalImageInputs, image) };
  },
  async delete(id) {
    await client().client.images.delete(id);
  },
};

/** A personal image saved from an instance (or adopted by uuid). Its id is the image's uuid. */
export class PersonalImage extends pulumi.dynamic.Resource {
  declare readonly imageUuid: pulumi.Output<string>;
  declare readonly title: pulumi.Output<string | null>;
  declare readonly remark: pulumi.Output<string | null>;
  declare readonly layerCount: pulumi.Output<number | null>;
  declare readonly sizeGb: pulumi.Output<number | null>;
  declare readonly podUuid: pulumi.Output<string | null>;
  declare readonly podTag: pulumi.Output<string | null>;
  declare readonly saveImageStatus: pulumi.Output<number | null>;
  declare readonly createTime: pulumi.Output<number | null>;

  constructor(name: string, args: PersonalImageArgs, opts?: pulumi.CustomResourceOptions) {
    const outs = {
      imageUuid: undefined,
      title: undefined,
      remark: undefined,
      layerCount: undefined,
      sizeGb: undefined,
      podUuid: undefined,
      podTag: undefined,
      saveImageStatus: undefined,
      createTime: undefined,
    };
    super(shimProvider("PersonalImage"), name, { ...outs, ...args }, opts, "gpucloud", "PersonalImage");
  }
}
