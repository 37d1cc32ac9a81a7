/**
 * The assets room's state schema and limits: an uploaded asset's record as the store, the state file and
 * snapshots keep it (its measure, never its content).
 */
import { z } from "zod";
import { characters, choice, nonEmpty, seconds, text } from "../core/state/schema";
import { MEDIA_TYPES } from "./media-types";

/** Spec Limits: "100 MB per file"; read as MiB, the larger of the two readings. */
export const MAX_ASSET_BYTES = 100 * 1024 * 1024;
/** Spec is silent; the common file-system limit, so a stored name stays small. */
export const MAX_FILENAME_CHARACTERS = 255;

/** An uploaded asset as the store keeps it: its measure, never its content. */
export const assetRecordSchema = z.strictObject({
  asset_id: nonEmpty,
  owner: nonEmpty,
  media_type: choice(MEDIA_TYPES),
  mime_type: text,
  size_bytes: z.int().min(0).max(MAX_ASSET_BYTES),
  sha256: text,
  head: text,
  purpose: choice(["temp_input"]),
  created_at: seconds,
  expires_at: seconds,
  original_filename: characters(MAX_FILENAME_CHARACTERS),
});
export type AssetRecord = z.infer<typeof assetRecordSchema>;

export const assetsStateSchema = z.strictObject({ assets: z.array(assetRecordSchema) });
export type AssetSnapshot = z.infer<typeof assetsStateSchema>;
