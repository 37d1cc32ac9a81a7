/**
 * The images room's store: personal images made by save_image, their saving as a clock-driven transition,
 * listed and deleted by their owner; nothing of HTTP.
 */
import { DEFAULT_DURATIONS } from "../core/durations";
import { notFound } from "../core/http/errors";
import type { KnownState } from "../core/state/schema";
import { dueByNow, earliestDue } from "../core/schedule";
import { requireUser } from "../core/state/schema";
import { SAVE_STATUS } from "./codes";
import type { ImageRecord } from "./state";
import { savedImageTitle } from "./title";

/** How long saving an instance as an image takes by default (`--durations save_image=S`). */
export const SAVE_IMAGE_SECONDS = DEFAULT_DURATIONS.save_image;

export interface PersonalImage {
  title: string;
  uuid: string;
  remark: string;
  layer_count: number;
  size: number;
  pod_uuid: string;
  pod_tag: string;
  save_image_status: number;
  create_time: number;
}

/** Personal images: made by save_image, listed and deleted by their owner only. */
export class ImagesStore {
  private images = new Map<string, ImageRecord>();

  constructor(
    private readonly now: () => number,
    private readonly nextId: (prefix: string) => string,
    private readonly saveSeconds = SAVE_IMAGE_SECONDS,
  ) {}

  list(owner: string): PersonalImage[] {
    return [...this.images.values()].filter((i) => i.owner === owner).map(publicView);
  }

  /** The caller's own image, or undefined (another user's image looks missing). */
  find(owner: string, imageUuid: string): PersonalImage | undefined {
    const image = this.images.get(imageUuid);
    return image && image.owner === owner ? publicView(image) : undefined;
  }

  /**
   * Starts saving an image named after the instance (`name`: its title, or its image's name); it
   * reaches status 2 after `durations.save_image`.
   */
  startSave(
    owner: string,
    from: { name: string; pod_uuid: string; pod_tag: string; instance_uuid: string },
  ): PersonalImage {
    const now = this.now();
    const image: ImageRecord = {
      title: savedImageTitle(from.name, now),
      uuid: this.nextId("pimg"),
      remark: `saved from instance ${from.instance_uuid}`,
      layer_count: 12,
      size: 18.6,
      pod_uuid: from.pod_uuid,
      pod_tag: from.pod_tag,
      save_image_status: SAVE_STATUS.UPLOADING,
      create_time: now,
      owner,
      next: { save_image_status: SAVE_STATUS.SUCCEEDED, at: now + this.saveSeconds },
    };
    this.images.set(image.uuid, image);
    return publicView(image);
  }

  delete(owner: string, imageUuid: string): void {
    if (!this.find(owner, imageUuid)) throw notFound("image", imageUuid);
    this.images.delete(imageUuid);
  }

  nextDueAt(): number | undefined {
    return earliestDue(this.images.values(), (image) => image.next);
  }

  runDue(now: number): void {
    for (const image of dueByNow(this.images.values(), (i) => i.next, now)) {
      image.save_image_status = image.next!.save_image_status;
      image.next = null;
    }
  }

  snapshot(): ImageRecord[] {
    return [...this.images.values()].map((i) => structuredClone(i));
  }

  restore(state: ImageRecord[]): void {
    this.images = new Map(state.map((i) => [i.uuid, structuredClone(i)]));
  }

  checkState(state: ImageRecord[], known: KnownState): void {
    state.forEach((image, index) => requireUser(known, `[${index}].owner`, image.owner));
  }

  reset(): void {
    this.images.clear();
  }
}

function publicView(image: ImageRecord): PersonalImage {
  const { owner: _owner, next: _next, ...shown } = image;
  return shown;
}
