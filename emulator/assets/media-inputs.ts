/**
 * The assets room's rules for media values inside workflow and model-run inputs (a URL, a data URL, an asset
 * reference, with an optional role and label), shared by both areas.
 */
import { AssetStore } from "./store";
import { MediaType } from "./media-types";

/**
 * Rules for media values inside workflow and model-run inputs (docs/design/cloud-api.md#media-inputs-and-labels).
 * Shared by both areas; each wraps a problem in its own error shape.
 */
export class MediaInputProblem extends Error {}

export interface MediaObject {
  uri: string;
  role?: string;
  label?: string;
}

export type MediaValue = string | MediaObject;

export interface MediaContext {
  assets: AssetStore;
  owner: string;
  now: number;
  labels: LabelBook;
}

const DATA_URL = /^data:([a-z0-9.+-]+)\/([a-z0-9.+-]+);base64,([A-Za-z0-9+/]+={0,2})$/i;
const ASSET_REF = /^asset:\/\/(asset_[A-Za-z0-9]+)$/;

/** Labels are trimmed of whitespace and of one leading `@`, and must be unique inside one request. */
export class LabelBook {
  private readonly seen = new Set<string>();

  claim(raw: string): string | undefined {
    const trimmed = raw.trim();
    const label = (trimmed.startsWith("@") ? trimmed.slice(1) : trimmed).trim();
    // Spec is silent on a label that trims to nothing; it names no resource, so it counts as no label.
    if (label === "") return undefined;
    // Spec says "unique" without a case rule; the prompt refers to labels verbatim, so comparison is case-sensitive.
    if (this.seen.has(label))
      throw new MediaInputProblem(`label "${label}" is used more than once in this request`);
    this.seen.add(label);
    return label;
  }
}

/** A checked media value with its label normalised, or a MediaInputProblem saying why it is refused. */
export function checkMediaValue(value: unknown, expected: MediaType, ctx: MediaContext): MediaValue {
  if (typeof value === "string") {
    checkResourceString(value, expected, ctx);
    return value;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new MediaInputProblem("must be a resource string or an object {uri, role, label}");
  }
  const { uri, role, label, ...rest } = value as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length > 0)
    throw new MediaInputProblem(`unknown key ${extra[0]} in a media object (allowed: uri, role, label)`);
  if (typeof uri !== "string") throw new MediaInputProblem("uri must be a string");
  if (role !== undefined && typeof role !== "string") throw new MediaInputProblem("role must be a string");
  if (label !== undefined && typeof label !== "string") throw new MediaInputProblem("label must be a string");
  checkResourceString(uri, expected, ctx);
  const normalised: MediaObject = { uri };
  if (role !== undefined) normalised.role = role;
  const claimed = label === undefined ? undefined : ctx.labels.claim(label);
  if (claimed !== undefined) normalised.label = claimed;
  return normalised;
}

function checkResourceString(value: string, expected: MediaType, ctx: MediaContext): void {
  if (value.startsWith("asset://")) return checkAssetReference(value, expected, ctx);
  if (value.startsWith("data:")) return checkDataUrl(value, expected);
  if (/^asset_/.test(value)) {
    throw new MediaInputProblem(`a bare asset id is not a resource; use asset://${value}`);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new MediaInputProblem(
      "must be an http(s) URL, a data URL (data:<mime>;base64,...) or asset://<asset_id>",
    );
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") {
    throw new MediaInputProblem(
      "must be an http(s) URL, a data URL (data:<mime>;base64,...) or asset://<asset_id>",
    );
  }
}

function checkAssetReference(value: string, expected: MediaType, ctx: MediaContext): void {
  const match = ASSET_REF.exec(value);
  if (!match) throw new MediaInputProblem("an asset reference has the form asset://asset_<token>");
  const found = ctx.assets.lookup(ctx.owner, match[1], ctx.now);
  if ("problem" in found) throw new MediaInputProblem(found.problem);
  if (found.asset.media_type !== expected) {
    throw new MediaInputProblem(
      `asset ${match[1]} is a ${found.asset.media_type} asset, ${expected} expected`,
    );
  }
}

function checkDataUrl(value: string, expected: MediaType): void {
  const match = DATA_URL.exec(value);
  if (!match) throw new MediaInputProblem("a data URL has the form data:<mime>;base64,<data>");
  const top = match[1].toLowerCase();
  if (expected !== "file" && top !== expected) {
    throw new MediaInputProblem(`data URL of type ${top}/${match[2]} where ${expected} media is expected`);
  }
}
