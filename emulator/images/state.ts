import { z } from "zod";
import { nonEmpty, seconds } from "../core/state-schema";

/** A personal image as the store keeps it (and the state file holds it). */
export const imageRecordSchema = z.object({
  title: z.string(),
  uuid: nonEmpty,
  remark: z.string(),
  layer_count: z.int().min(0),
  size: z.number().min(0),
  pod_uuid: z.string(),
  pod_tag: z.string(),
  save_image_status: z.int(),
  create_time: seconds,
  owner: nonEmpty,
  /** The pending transition of save_image_status (data, driven by the clock). */
  next: z.object({ save_image_status: z.int(), at: seconds }).nullable(),
});
export type ImageRecord = z.infer<typeof imageRecordSchema>;

export const imagesStateSchema = z.array(imageRecordSchema);
