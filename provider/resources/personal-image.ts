/**
 * The PersonalImage resource: an image saved from an instance, or an adopted one
 * (docs/design/contracts.md#personalimage). Its id is the image's uuid.
 */
import { z } from "zod";
import {
  OutcomeUnknownError,
  pollUntil,
  retryUntil,
  SAVE_IMAGE_STATUS,
  type CallOptions,
  type GpuCloudClient,
  type PersonalImage as CloudImage,
} from "../../sdk";
import { token } from "../tokens";
import { exactlyOneOf, parsedOrExplained } from "../framework/check";
import type { ProviderContext } from "../framework/context";
import { defineResource, outputFields, type Inputs } from "../framework/define-resource";
import { isCancelled, messageOf, ResourceInitError, UnsettledOutcomeError } from "../framework/errors";
import { withRules } from "../framework/input-rules";
import { OneAtATime } from "../framework/one-at-a-time";
import type { MemoryPart } from "../framework/process-memory";

/** Declared on both inputs it reads. */
const savedOrAdopted = exactlyOneOf<Record<string, unknown>>(
  ["instanceUuid", "adoptImageUuid"],
  "save an instance or adopt an existing image",
);

const PersonalImageInputs = z.object({
  instanceUuid: withRules(
    z
      .string({ error: "must be a string (an instance uuid)" })
      .min(1, "must not be empty")
      .optional()
      .describe("Save this instance as a new personal image."),
    { replaces: true, checks: [savedOrAdopted] },
  ),
  adoptImageUuid: withRules(
    z
      .string({ error: "must be a string (a personal image uuid)" })
      .min(1, "must not be empty")
      .optional()
      .describe("Adopt this existing personal image instead of saving one."),
    { replaces: true, adoptsById: true, checks: [savedOrAdopted] },
  ),
  waitTimeoutSeconds: z
    .number({ error: "must be a number of seconds" })
    .int("must be a whole number of seconds from 1 to 9007199254740991")
    .positive("must be positive")
    .default(900)
    .describe(
      "How long create waits for the image to be saved (and the next update, when it did not finish).",
    ),
});
type PersonalImageInputs = Inputs<typeof PersonalImageInputs>;

const field = outputFields<CloudImage>();
/** An update changes nothing in the cloud, but it may see an unfinished save finish: these it never changes. */
const STABLE = { stable: true } as const;

const outputs = {
  imageUuid: field(z.string().describe("The image's uuid; also its id."), "uuid", STABLE),
  title: field(z.string().nullable().describe("The image's title."), "title", STABLE),
  remark: field(z.string().nullable().describe("The image's remark."), "remark", STABLE),
  layerCount: field(z.number().int().nullable().describe("How many layers the image has."), "layer_count"),
  sizeGb: field(z.number().nullable().describe("The image's size in GB."), "size"),
  podUuid: field(z.string().nullable().describe("The pod the image was saved from."), "pod_uuid", STABLE),
  podTag: field(z.string().nullable().describe("The version of that pod."), "pod_tag", STABLE),
  saveImageStatus: field(
    z.number().int().nullable().describe("1 uploading, 2 saved, 3 failed."),
    "save_image_status",
  ),
  createTime: field(
    z.number().int().nullable().describe("When it was saved, Unix seconds."),
    "create_time",
    STABLE,
  ),
};

/**
 * The image as the private list shows it; undefined only when the list is whole (it holds `total`
 * images) and the image is not in it: an image missing from a partial list may well exist.
 */
async function findImage(
  api: GpuCloudClient,
  imageUuid: string,
  call: CallOptions = {},
): Promise<CloudImage | undefined> {
  const { image_list, total } = await api.images.list(call);
  const image = image_list.find((i) => i.uuid === imageUuid);
  if (image || image_list.length >= total) return image;
  throw new Error(
    `Could not read image ${imageUuid}: the personal image list answered ${image_list.length} of its ${total} images ` +
      "and not this one, so whether it still exists cannot be told (nothing counts as deleted). Try again later.",
  );
}

/**
 * save_image answers without the new image's uuid
 * (docs/design/live-service-notes.md#power-and-schedule-calls), so the new image is the one in the
 * private list that was not there before; saves run one at a time per process so that stays unambiguous.
 * A lost answer to save_image is followed the same way: if the save happened, its image appears. If the
 * cloud shows no save started, it failed before doing anything, and waiting for it would only time out.
 * Once the image is listed it exists, and no failure after that forgets it (untilSaved).
 */
const SAVES: MemoryPart<OneAtATime> = { name: "PersonalImage saves", create: () => new OneAtATime() };

async function save(ctx: ProviderContext, inputs: PersonalImageInputs): Promise<CloudImage> {
  const { api } = ctx;
  const instanceUuid = inputs.instanceUuid!;
  return ctx.process.memory(SAVES).run(async () => {
    // One deadline for the whole save, counted once this save's turn has come.
    const deadline = Date.now() + inputs.waitTimeoutSeconds * 1000;
    const before = (await api.images.list({ signal: ctx.signal })).image_list.map((i) => i.uuid);
    if (ctx.signal?.aborted) {
      throw new Error(
        `Could not save instance ${instanceUuid} as an image: the operation was cancelled before save_image was sent; nothing was saved.`,
        { cause: ctx.signal.reason },
      );
    }
    // save_image is never given the signal: once sent it finishes, and its outcome is known.
    try {
      await api.instances.saveImage(instanceUuid);
    } catch (err) {
      if (!(err instanceof OutcomeUnknownError)) throw err;
      await assertSaveStarted(ctx, instanceUuid, before, err, deadline);
    }
    const image = await newImage(ctx, instanceUuid, before, deadline);
    return untilSaved(ctx, inputs, image, deadline);
  });
}

/**
 * The image this save made: the newest listed that was not there before. Until one is listed there is no
 * id to keep. The instance's save_image_status is not taken as the end of it: a cloud that sets it late
 * could show an earlier save's 3 (failed) while this save goes on, and giving up then would forget an image.
 */
async function newImage(
  ctx: ProviderContext,
  instanceUuid: string,
  before: string[],
  deadline: number,
): Promise<CloudImage> {
  const { api } = ctx;
  const pollIntervalMs = ctx.settings.pollIntervalMs;
  const subject = `the image saved from instance ${instanceUuid}`;
  const notListedBefore = (images: CloudImage[]) => images.filter((i) => !before.includes(i.uuid));
  try {
    const listed = await pollUntil(
      {
        description: `${subject} to be listed`,
        action: `find ${subject}`,
        method: "GET",
        path: "/image/private/list",
        poll: async (call) => newestFirst(notListedBefore((await api.images.list(call)).image_list)),
        describeState: (images) => (images.length > 0 ? `image ${images[0].uuid}` : "no new image"),
        isDone: (images) => images.length > 0,
      },
      { deadline, pollIntervalMs, maxPollIntervalMs: pollIntervalMs, signal: ctx.signal },
    );
    return listed[0];
  } catch (err) {
    // Cancelled: the save was accepted, so its image is listed at once or soon. One last look (a read
    // bounded by its request timeout) finds it, and the create then keeps it (untilSaved).
    const found = isCancelled(err, ctx.signal)
      ? await api.images.list({ deadline: Date.now() + ctx.settings.requestTimeoutMs }).then(
          (l) => newestFirst(notListedBefore(l.image_list)),
          () => [],
        )
      : [];
    if (found.length > 0) return found[0];
    throw new UnsettledOutcomeError(
      `Could not save instance ${instanceUuid} as an image: save_image was accepted, but no new image could be found ` +
        `in your personal image list (${messageOf(err)}). Check that list before running the update again: ` +
        "an image listed later is this save's; adopt it with adoptImageUuid, or delete it.",
    );
  }
}

/** Images newest first (an image without a creation time last). */
function newestFirst(images: CloudImage[]): CloudImage[] {
  return [...images].sort((a, b) => (b.create_time ?? 0) - (a.create_time ?? 0));
}

/**
 * Waits until the listed image is saved. The image exists and may bill, so a failure of the wait (a
 * timeout, reads that keep failing, a save the cloud reports failed) fails the create or update as a
 * ResourceInitError carrying the image's id and record, and the state keeps it: the next `up` updates it,
 * which waits again, or replaces it when its save failed (see the diff's `remade`). Only an image the
 * list no longer holds is not kept: nothing of it is left.
 */
async function untilSaved(
  ctx: ProviderContext,
  inputs: PersonalImageInputs,
  image: CloudImage,
  deadline: number,
): Promise<CloudImage> {
  const { api, settings } = ctx;
  try {
    ctx.signal?.throwIfAborted();
    return await api.images.waitForSaved(
      { image_uuid: image.uuid },
      {
        deadline,
        pollIntervalMs: settings.pollIntervalMs,
        maxPollIntervalMs: settings.pollIntervalMs,
        signal: ctx.signal,
      },
    );
  } catch (err) {
    if (isCancelled(err, ctx.signal)) {
      throw new ResourceInitError(
        `Could not save instance ${inputs.instanceUuid} as an image: the operation was cancelled while waiting for image ${image.uuid} ` +
          `to be saved (last seen: save_image_status ${image.save_image_status ?? "not reported"}). The image exists, so the stack keeps it: ` +
          "run `pulumi up` again to wait until it is saved, or `pulumi destroy` to delete it.",
        { id: image.uuid, state: { inputs, cloud: image } },
      );
    }
    // One last read, for the record the state keeps (a failed save shows status 3 only there).
    const last = await findImage(api, image.uuid, { deadline: Date.now() + settings.requestTimeoutMs }).then(
      (found) => found ?? null,
      () => image,
    );
    const saving = `Could not save instance ${inputs.instanceUuid} as an image:`;
    if (last === null) {
      throw new Error(
        `${saving} ${messageOf(err)} Image ${image.uuid} is no longer in your personal image list, so nothing of it ` +
          "is left to keep. Run `pulumi refresh`, then `pulumi up` to save the instance again.",
      );
    }
    throw new ResourceInitError(
      last.save_image_status === SAVE_IMAGE_STATUS.failed
        ? `${saving} the cloud reports that saving image ${image.uuid} failed (save_image_status 3). The stack keeps ` +
            "the failed image, so the next `pulumi up` replaces it: it saves the instance again, then deletes the failed image."
        : `${saving} ${messageOf(err)} Image ${image.uuid} exists (save_image_status ${last.save_image_status ?? "not reported"}), ` +
            "so the stack keeps it: run `pulumi up` again to wait until it is saved, or `pulumi destroy` to delete it.",
      { id: image.uuid, state: { inputs, cloud: last } },
    );
  }
}

/**
 * A saved image whose save the cloud reported failed (save_image_status 3), kept in the state by the
 * create or update that saw it fail rather than deleted there: that delete could fail or lose its answer
 * too and leave an image no state knows of. Kept, the next `up` replaces it (a new save, then the engine
 * deletes the failed image) and `destroy` deletes it. An adopted image is never replaced for it: the
 * replacement would adopt the same image, which the engine would then delete.
 */
function failedSave(_id: string, stored: Record<string, unknown>): boolean {
  return typeof stored.instanceUuid === "string" && stored.saveImageStatus === SAVE_IMAGE_STATUS.failed;
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
    { deadline, pauseMs: ctx.settings.pollIntervalMs, signal: ctx.signal },
  ).catch((err: unknown) => {
    if (!isCancelled(err, ctx.signal)) throw err;
    throw new UnsettledOutcomeError(
      `Could not save instance ${instanceUuid} as an image: the answer to save_image was lost (${lost.status === undefined ? "no answer came" : `HTTP ${lost.status}`}) ` +
        "and the operation was cancelled before the cloud showed whether a save started. Check your personal image list " +
        "before running the update again: an image listed later is this save's; adopt it with adoptImageUuid, or delete it.",
    );
  });
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
  description: "A personal image saved from an instance (or adopted by uuid).",
  id: "the image's uuid (its imageUuid)",
  example: [
    'const gpu = await gpucloud.getGpu({ name: "4090D" });',
    'const pod = await gpucloud.getPod({ title: "ComfyUI" });',
    'const worker = new gpucloud.Instance("worker", { podUuid: pod.podUuid, gpuUuid: gpu.gpuUuid, gpuNums: 1 });',
    "// Save the worker as an image; create waits until the cloud reports it saved.",
    'const saved = new gpucloud.PersonalImage("worker-image", { instanceUuid: worker.instanceUuid });',
    "// Bring an image saved earlier under this stack by its uuid.",
    'new gpucloud.PersonalImage("base", { adoptImageUuid: "3f2c8a41-0f1e-4a57-9a6b-2b7c1d9e8f00" });',
    "return { imageUuid: saved.imageUuid };",
  ],
  inputs: PersonalImageInputs,
  outputs,
  remade: { when: failedSave, output: "saveImageStatus" },
  async create(ctx, inputs) {
    const image = inputs.adoptImageUuid ? await adopt(ctx, inputs.adoptImageUuid) : await save(ctx, inputs);
    return { id: image.uuid, inputs, cloud: image };
  },
  async read(ctx, id, olds) {
    const image = await findImage(ctx.api, id);
    if (!image) return undefined;
    const inputs = parsedOrExplained(
      PersonalImageInputs,
      olds,
      (problems) =>
        `Could not refresh image ${id}: the state holds inputs the PersonalImage resource does not accept ` +
        `(${problems}). Remove it from the state with \`pulumi state delete\` and import it again ` +
        `(\`pulumi import ${token("PersonalImage")} <name> ${id}\`).`,
    );
    return { inputs, cloud: image };
  },
  async update(ctx, id, _olds, news) {
    const image = await findImage(ctx.api, id);
    if (!image) {
      throw new Error(
        `Could not update image ${id}: it is no longer in your personal image list. Run a refresh.`,
      );
    }
    // A save its create left unfinished, kept in the state with init errors: the engine updates it even
    // without changes, and the update waits for the save again.
    const unfinished =
      news.instanceUuid !== undefined &&
      image.save_image_status !== undefined &&
      image.save_image_status !== SAVE_IMAGE_STATUS.succeeded;
    const deadline = Date.now() + news.waitTimeoutSeconds * 1000;
    return { inputs: news, cloud: unfinished ? await untilSaved(ctx, news, image, deadline) : image };
  },
  async delete(ctx, id) {
    await ctx.api.images.delete(id);
  },
  async import(ctx, id) {
    const image = await findImage(ctx.api, id);
    if (!image) throw new Error(`Could not import image ${id}: it is not in your personal image list.`);
    const inputs = parsedOrExplained(
      PersonalImageInputs,
      { adoptImageUuid: id },
      (problems) => `Could not import image ${id}: ${problems}.`,
    );
    return { inputs, cloud: image };
  },
});
