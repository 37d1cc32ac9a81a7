/**
 * The assets room's store: uploaded workflow input assets, their owners and expiry, and how the API shows
 * them; nothing of HTTP.
 */
import { createHmac, randomBytes } from "node:crypto";
import { ApiError, paramError } from "../core/http/errors";
import type { KnownState } from "../core/state/schema";
import { requireUser } from "../core/state/schema";
import { inferMimeType, isMediaType, MEDIA_TYPES, MediaType, mediaTypeOfMime } from "./media-types";
import { MAX_FILENAME_CHARACTERS, type AssetRecord, type AssetSnapshot } from "./state";

export type { AssetRecord } from "./state";

/** What the upload stream left behind: never the content itself, only its measure (brief: no 100 MB in RAM). */
export interface UploadedFile {
  filename: string;
  declaredMime: string | undefined;
  sizeBytes: number;
  sha256: string;
  /** base64 of the first bytes, enough to recognise a file type later. */
  head: string;
}

export interface UploadFields {
  media_type?: string;
  purpose?: string;
  ttl_hours?: number;
}

export interface Asset {
  id: string;
  asset_id: string;
  asset_uri: string;
  url: string;
  content_url: string;
  signed_url: string;
  media_type: MediaType;
  mime_type: string;
  size_bytes: number;
  purpose: "temp_input";
  persistent: false;
  expires_at: string;
  status: "confirmed";
  original_filename: string;
}

export const DEFAULT_TTL_HOURS = 48;
/** Spec is silent on a maximum validity; a month keeps "temporary input" temporary. */
export const MAX_TTL_HOURS = 720;
const ASSET_HOST = "https://assets.gpucloud-emulator.invalid";
const SIGNING_SECRET = "gpucloud-emulator-asset-signing";

export class AssetStore {
  private assets = new Map<string, AssetRecord>();

  create(owner: string, file: UploadedFile, fields: UploadFields, now: number): Asset {
    const purpose = fields.purpose ?? "temp_input";
    if (purpose !== "temp_input") throw paramError("purpose", "only temp_input is supported");
    const ttl = fields.ttl_hours ?? DEFAULT_TTL_HOURS;
    if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_TTL_HOURS) {
      throw paramError("ttl_hours", `must be an integer from 1 to ${MAX_TTL_HOURS}`);
    }
    if (fields.media_type !== undefined && !isMediaType(fields.media_type)) {
      throw paramError("media_type", `must be one of ${MEDIA_TYPES.join(", ")}`);
    }
    if (Array.from(file.filename).length > MAX_FILENAME_CHARACTERS) {
      throw paramError("file", `its filename must be at most ${MAX_FILENAME_CHARACTERS} characters`);
    }
    const mime = inferMimeType(file.filename, file.declaredMime);
    const record: AssetRecord = {
      asset_id: `asset_${randomBytes(12).toString("hex")}`,
      owner,
      media_type: (fields.media_type as MediaType | undefined) ?? mediaTypeOfMime(mime),
      mime_type: mime,
      size_bytes: file.sizeBytes,
      sha256: file.sha256,
      head: file.head,
      purpose: "temp_input",
      created_at: now,
      expires_at: now + ttl * 3600,
      original_filename: file.filename,
    };
    this.assets.set(record.asset_id, record);
    return this.present(record);
  }

  /** GET /assets/{id}: another user's asset looks missing; an expired one is gone (docs/design/cloud-api.md#assets). */
  get(owner: string, assetId: string, now: number): Asset {
    return this.present(this.usable(owner, assetId, now));
  }

  /** The owner's usable assets, oldest first (the web console's list; the API has no list call). */
  listOf(owner: string, now: number): Asset[] {
    return [...this.assets.values()]
      .filter((record) => record.owner === owner && now < record.expires_at)
      .map((record) => this.present(record));
  }

  /** The asset behind an `asset://` reference, or why it cannot be used. */
  lookup(owner: string, assetId: string, now: number): { asset: AssetRecord } | { problem: string } {
    const record = this.assets.get(assetId);
    if (!record || record.owner !== owner) return { problem: `asset ${assetId} not found` };
    if (now >= record.expires_at) return { problem: `asset ${assetId} has expired` };
    return { asset: record };
  }

  snapshot(): AssetSnapshot {
    return { assets: [...this.assets.values()].map((a) => ({ ...a })) };
  }

  restore(state: AssetSnapshot): void {
    this.assets = new Map(state.assets.map((a) => [a.asset_id, { ...a }]));
  }

  checkState(state: AssetSnapshot, known: KnownState): void {
    state.assets.forEach((asset, index) => requireUser(known, `assets[${index}].owner`, asset.owner));
  }

  reset(): void {
    this.assets.clear();
  }

  private usable(owner: string, assetId: string, now: number): AssetRecord {
    const found = this.lookup(owner, assetId, now);
    // Spec Errors: codes for expired assets are "not shown"; an expired temporary asset is gone, so 404 like a missing one.
    if ("problem" in found) throw new ApiError(404, -1, found.problem);
    return found.asset;
  }

  private present(record: AssetRecord): Asset {
    const url = `${ASSET_HOST}/${record.asset_id}/${encodeURIComponent(record.original_filename)}`;
    const signature = createHmac("sha256", SIGNING_SECRET)
      .update(JSON.stringify([record.asset_id, record.expires_at]))
      .digest("hex");
    return {
      id: record.asset_id,
      asset_id: record.asset_id,
      asset_uri: `asset://${record.asset_id}`,
      url,
      content_url: url,
      signed_url: `${url}?expires=${record.expires_at}&signature=${signature}`,
      media_type: record.media_type,
      mime_type: record.mime_type,
      size_bytes: record.size_bytes,
      purpose: record.purpose,
      persistent: false,
      expires_at: isoWithOffset(record.expires_at),
      status: "confirmed",
      original_filename: record.original_filename,
    };
  }
}

/** ISO 8601 with an explicit offset (docs/design/cloud-api.md#assets); the emulator keeps every clock in UTC. */
export function isoWithOffset(seconds: number): string {
  return new Date(Math.floor(seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, "+00:00");
}
