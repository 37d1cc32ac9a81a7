import { z } from "zod";
import { choice, nonEmpty, seconds } from "../core/state-schema";
import { MEDIA_TYPES } from "./media-types";

/** An uploaded asset as the store keeps it: its measure, never its content. */
export const assetRecordSchema = z.object({
  asset_id: nonEmpty,
  owner: nonEmpty,
  media_type: choice(MEDIA_TYPES),
  mime_type: z.string(),
  size_bytes: z.int().min(0),
  sha256: z.string(),
  head: z.string(),
  purpose: choice(["temp_input"]),
  created_at: seconds,
  expires_at: seconds,
  original_filename: z.string(),
});
export type AssetRecord = z.infer<typeof assetRecordSchema>;

export const assetsStateSchema = z.object({ assets: z.array(assetRecordSchema) });
export type AssetSnapshot = z.infer<typeof assetsStateSchema>;
