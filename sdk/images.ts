/** Personal images: list, delete, and waiting for an image being saved from an instance. */
import { z } from "zod";
import { endpoint, send } from "./endpoints";
import { BusinessError, NotFoundError } from "./errors";
import type { Instances } from "./instances";
import type { CallOptions, Transport } from "./transport";
import { pollUntil, type WaitOptions } from "./waiters";
import { int, listOf, NoData, whenSet } from "./zod-helpers";

export const PersonalImageSchema = z.looseObject({
  uuid: z.string(),
  title: whenSet(z.string()),
  remark: whenSet(z.string()),
  layer_count: whenSet(int),
  size: whenSet(z.number()).describe("GB"),
  pod_uuid: whenSet(z.string()).describe("source pod"),
  pod_tag: whenSet(z.string()).describe("source pod version"),
  save_image_status: whenSet(int).describe("1 uploading, 2 succeeded, 3 failed"),
  create_time: whenSet(int),
});
export type PersonalImage = z.infer<typeof PersonalImageSchema>;

export const PersonalImageListSchema = z.looseObject({ image_list: listOf(PersonalImageSchema), total: int });
export type PersonalImageList = z.infer<typeof PersonalImageListSchema>;

export const SAVE_IMAGE_STATUS = { uploading: 1, succeeded: 2, failed: 3 } as const;

/**
 * Which image to wait for: a known image uuid, or the image being saved from an instance. save_image
 * answers without data, so the new image is recognised as the one image in the list
 * that was not there before the save (`excluding_image_uuids`, a snapshot taken before calling it).
 */
export type SavedImageTarget =
  { image_uuid: string } | { instance_uuid: string; excluding_image_uuids: string[] };

interface SaveProgress {
  image?: PersonalImage;
  instanceStatus?: number;
}

function describeProgress(p: SaveProgress): string {
  const parts: string[] = [];
  if (p.instanceStatus !== undefined) parts.push(`instance save_image_status ${p.instanceStatus}`);
  parts.push(
    p.image
      ? `image ${p.image.uuid} save_image_status ${p.image.save_image_status}`
      : "no new image listed yet",
  );
  return parts.join(", ");
}

/** Every endpoint of the area, once. */
const ENDPOINTS = {
  list: endpoint("GET /image/private/list", "read", PersonalImageListSchema, {
    action: "list personal images",
  }),
  delete: endpoint("POST /image/private/delete", "idempotent", NoData, {
    action: (image_uuid: string) => `delete personal image ${image_uuid}`,
    request: (image_uuid) => ({ json: { image_uuid } }),
    goneIsDone: true,
  }),
};

export class Images {
  constructor(
    private readonly transport: Transport,
    private readonly instances: Instances,
  ) {}

  list(options: CallOptions = {}): Promise<PersonalImageList> {
    return send(this.transport, ENDPOINTS.list, [], options);
  }

  /** Irreversible. An image that is already gone counts as deleted. */
  delete(image_uuid: string, options: CallOptions = {}): Promise<void> {
    return send(this.transport, ENDPOINTS.delete, [image_uuid], options);
  }

  /** Poll until the image is saved (save_image_status 2); status 3 throws BusinessError. */
  waitForSaved(target: SavedImageTarget, options: WaitOptions = {}): Promise<PersonalImage> {
    const subject =
      "image_uuid" in target
        ? `image ${target.image_uuid}`
        : `the image saved from instance ${target.instance_uuid}`;
    const action = `wait for ${subject}`;
    return pollUntil<SaveProgress>(
      {
        description: `${subject} to be saved (save_image_status 2)`,
        action,
        method: ENDPOINTS.list.method,
        path: ENDPOINTS.list.path,
        poll: (call) => this.saveProgress(target, call),
        describeState: describeProgress,
        isDone: (p) => {
          if (
            p.image?.save_image_status === SAVE_IMAGE_STATUS.failed ||
            (!p.image && p.instanceStatus === SAVE_IMAGE_STATUS.failed)
          ) {
            throw new BusinessError({
              action,
              method: ENDPOINTS.list.method,
              path: ENDPOINTS.list.path,
              message: `Could not save ${subject}: the cloud reports save_image_status 3 (upload failed). Delete the failed image if it is listed and save the instance again.`,
            });
          }
          return p.image?.save_image_status === SAVE_IMAGE_STATUS.succeeded;
        },
      },
      options,
    ).then((p) => p.image as PersonalImage);
  }

  /** save_image then waitForSaved: the list snapshot taken first identifies the new image. */
  async saveFromInstance(instance_uuid: string, options: WaitOptions = {}): Promise<PersonalImage> {
    const call = { signal: options.signal, deadline: options.deadline };
    const before = await this.list(call);
    await this.instances.saveImage(instance_uuid, call);
    return this.waitForSaved(
      { instance_uuid, excluding_image_uuids: before.image_list.map((i) => i.uuid) },
      options,
    );
  }

  private async saveProgress(target: SavedImageTarget, call: CallOptions): Promise<SaveProgress> {
    const { image_list } = await this.list(call);
    if ("image_uuid" in target) {
      const image = image_list.find((i) => i.uuid === target.image_uuid);
      if (!image) {
        throw new NotFoundError({
          action: `wait for image ${target.image_uuid}`,
          method: ENDPOINTS.list.method,
          path: ENDPOINTS.list.path,
          message: `Could not wait for image ${target.image_uuid}: it is not in your personal image list. Check the uuid; the image may have been deleted.`,
        });
      }
      return { image };
    }
    const excluded = new Set(target.excluding_image_uuids);
    const fresh = image_list
      .filter((i) => !excluded.has(i.uuid))
      .sort((a, b) => (b.create_time ?? 0) - (a.create_time ?? 0));
    const instance = await this.instances.info(target.instance_uuid, call);
    return { image: fresh[0], instanceStatus: instance.save_image_status };
  }
}
