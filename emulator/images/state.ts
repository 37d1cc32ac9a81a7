/**
 * The images room's state schema: a personal image as the store, the state file and snapshots keep it.
 */
import { z } from "zod";
import { characters, nonEmpty, seconds, text } from "../core/state/schema";
import { oneOfInts } from "../core/http/validation";
import { TITLE_MAX } from "../instances/codes";
import { SAVE_STATUS } from "./codes";
import { repairedSavedTitle } from "./title";

const saveStatus = oneOfInts(Object.values(SAVE_STATUS));

/** A personal image as the store keeps it (and the state file holds it). */
export const imageRecordSchema = z.strictObject({
  /** The instance's title when it was saved. Earlier emulators did not cut it: such titles are cut on load. */
  title: z.string().transform(repairedSavedTitle).pipe(characters(TITLE_MAX)),
  uuid: nonEmpty,
  remark: text,
  layer_count: z.int().min(0),
  size: z.number().min(0),
  pod_uuid: text,
  pod_tag: text,
  save_image_status: saveStatus,
  create_time: seconds,
  owner: nonEmpty,
  /** The pending transition of save_image_status (data, driven by the clock). */
  next: z.strictObject({ save_image_status: saveStatus, at: seconds }).nullable(),
});
export type ImageRecord = z.infer<typeof imageRecordSchema>;

export const imagesStateSchema = z.array(imageRecordSchema);
