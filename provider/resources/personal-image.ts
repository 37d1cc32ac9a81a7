/** The PersonalImage resource: an image saved from an instance, or an adopted one (DESIGN §3). Its id is the image's uuid. */
import { z } from "zod";
import {
  OutcomeUnknownError,
  retryUntil,
  SAVE_IMAGE_STATUS,
  type GpuCloudClient,
  type PersonalImage as CloudImage,
} from "../../sdk";
import { exactlyOneOf } from "../framework/check";
import type { ProviderContext } from "../framework/context";
import { defineResource, outputFields, type Inputs } from "../framework/define-resource";
import { serialised } from "../framework/serialised";

const PersonalImageInputs = z.object({
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
type PersonalImageInputs = Inputs<typeof PersonalImageInputs>;

const field = outputFields<CloudImage>();

const outputs = {
  imageUuid: field(z.string().describe("The image's uuid; also its id."), "uuid"),
  title: field(z.string().nullable().describe("The image's title."), "title"),
  remark: field(z.string().nullable().describe("The image's remark."), "remark"),
  layerCount: field(z.number().int().nullable().describe("How many layers the image has."), "layer_count"),
  sizeGb: field(z.number().nullable().describe("The image's size in GB."), "size"),
  podUuid: field(z.string().nullable().describe("The pod the image was saved from."), "pod_uuid"),
  podTag: field(z.string().nullable().describe("The version of that pod."), "pod_tag"),
  saveImageStatus: field(
    z.number().int().nullable().describe("1 uploading, 2 saved, 3 failed."),
    "save_image_status",
  ),
  createTime: field(z.number().int().nullable().describe("When it was saved, Unix seconds."), "create_time"),
};

/**
 * The image as the private list shows it; undefined only when the list is whole (it holds `total`
 * images) and the image is not in it: an image missing from a partial list may well exist.
 */
async function findImage(api: GpuCloudClient, imageUuid: string): Promise<CloudImage | undefined> {
  const { image_list, total } = await api.images.list();
  const image = image_list.find((i) => i.uuid === imageUuid);
  if (image || image_list.length >= total) return image;
  throw new Error(
    `Could not read image ${imageUuid}: the personal image list answered ${image_list.length} of its ${total} images ` +
      "and not this one, so whether it still exists cannot be told (nothing counts as deleted). Try again later.",
  );
}

/**
 * save_image answers without the new image's uuid (field-notes.md), so the new image is the one in the
 * private list that was not there before; saves run one at a time per process so that stays unambiguous.
 * A lost answer to save_image is followed the same way: if the save happened, its image appears. If the
 * cloud shows no save started, it failed before doing anything, and waiting for it would only time out.
 */
async function save(ctx: ProviderContext, inputs: PersonalImageInputs): Promise<CloudImage> {
  const { api } = ctx;
  const instanceUuid = inputs.instanceUuid!;
  const pollIntervalMs = ctx.settings.pollIntervalMs;
  const timeoutMs = inputs.waitTimeoutSeconds * 1000;
  return serialised("save_image", async () => {
    const before = (await api.images.list()).image_list.map((i) => i.uuid);
    try {
      await api.instances.saveImage(instanceUuid);
    } catch (err) {
      if (!(err instanceof OutcomeUnknownError)) throw err;
      await assertSaveStarted(ctx, instanceUuid, before, err, Date.now() + timeoutMs);
    }
    return api.images.waitForSaved(
      { instance_uuid: instanceUuid, excluding_image_uuids: before },
      { timeoutMs, pollIntervalMs, maxPollIntervalMs: pollIntervalMs },
    );
  });
}

/**
 * After a save_image whose answer was lost: a save that started shows at once, as a new image in the
 * private list or as the instance's save_image_status 1 (uploading); the emulator records both when it
 * accepts the call. Neither means the call failed before doing anything.
 */
async function assertSaveStarted(
  ctx: ProviderContext,
  instanceUuid: string,
  before: string[],
  lost: OutcomeUnknownError,
  deadline: number,
): Promise<void> {
  const { api } = ctx;
  const seen = await retryUntil(
    async (call) => {
      const [{ image_list }, instance] = await Promise.all([
        api.images.list(call),
        api.instances.info(instanceUuid, call),
      ]);
      return {
        fresh: image_list.filter((i) => !before.includes(i.uuid)),
        status: instance.save_image_status,
      };
    },
    { deadline, pauseMs: ctx.settings.pollIntervalMs },
  );
  if (seen.fresh.length > 0 || seen.status === SAVE_IMAGE_STATUS.uploading) return;
  throw new Error(
    `Could not save instance ${instanceUuid} as an image: save_image failed (${lost.status === undefined ? "the answer was lost" : `HTTP ${lost.status}`}) and the ` +
      "cloud shows no save started: no new image in your personal image list, and the instance's save_image_status " +
      `is ${seen.status ?? "not set"}, not 1 (uploading). Nothing was saved; run the update again.`,
  );
}

async function adopt(ctx: ProviderContext, imageUuid: string): Promise<CloudImage> {
  const image = await findImage(ctx.api, imageUuid);
  if (!image) {
    throw new Error(
      `Could not adopt image ${imageUuid}: it is not in your personal image list. Check adoptImageUuid.`,
    );
  }
  return image;
}

export const personalImage = defineResource({
  name: "PersonalImage",
  description: "A personal image saved from an instance (or adopted by uuid). Its id is the image's uuid.",
  inputs: PersonalImageInputs,
  outputs,
  diff: { replaceOnChanges: ["instanceUuid", "adoptImageUuid"], adoptsById: "adoptImageUuid" },
  // An update re-reads the image and changes nothing in the cloud.
  stableOutputs: Object.keys(outputs),
  checks: [
    exactlyOneOf<PersonalImageInputs>(
      ["instanceUuid", "adoptImageUuid"],
      "save an instance or adopt an existing image",
    ),
  ],
  async create(ctx, inputs) {
    const image = inputs.adoptImageUuid ? await adopt(ctx, inputs.adoptImageUuid) : await save(ctx, inputs);
    return { id: image.uuid, inputs, cloud: image };
  },
  async read(ctx, id, olds) {
    const image = await findImage(ctx.api, id);
    return image && { inputs: PersonalImageInputs.parse(olds), cloud: image };
  },
  async update(ctx, id, _olds, news) {
    const image = await findImage(ctx.api, id);
    if (!image) {
      throw new Error(
        `Could not update image ${id}: it is no longer in your personal image list. Run a refresh.`,
      );
    }
    return { inputs: news, cloud: image };
  },
  async delete(ctx, id) {
    await ctx.api.images.delete(id);
  },
  async import(ctx, id) {
    const image = await findImage(ctx.api, id);
    if (!image) throw new Error(`Could not import image ${id}: it is not in your personal image list.`);
    return { inputs: PersonalImageInputs.parse({ adoptImageUuid: id }), cloud: image };
  },
});
