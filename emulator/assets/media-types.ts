/**
 * File-type knowledge used to fill mime_type and media_type when the upload does not say
 * (docs/design/cloud-api.md#assets).
 */

export const MEDIA_TYPES = ["image", "video", "audio", "file"] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];

/** A Map, not an object: a file named `a.__proto__` or `a.constructor` must find nothing here. */
const MIME_BY_EXTENSION = new Map<string, string>([
  ["png", "image/png"],
  ["jpg", "image/jpeg"],
  ["jpeg", "image/jpeg"],
  ["gif", "image/gif"],
  ["webp", "image/webp"],
  ["bmp", "image/bmp"],
  ["mp4", "video/mp4"],
  ["mov", "video/quicktime"],
  ["webm", "video/webm"],
  ["mkv", "video/x-matroska"],
  ["avi", "video/x-msvideo"],
  ["mp3", "audio/mpeg"],
  ["wav", "audio/wav"],
  ["ogg", "audio/ogg"],
  ["flac", "audio/flac"],
  ["m4a", "audio/mp4"],
  ["aac", "audio/aac"],
  ["pdf", "application/pdf"],
  ["txt", "text/plain"],
  ["json", "application/json"],
  ["zip", "application/zip"],
]);

const GENERIC_MIME = new Set(["", "application/octet-stream", "binary/octet-stream"]);

export function isMediaType(value: string): value is MediaType {
  return (MEDIA_TYPES as readonly string[]).includes(value);
}

/** The declared MIME type unless it is generic, else the one the file extension implies. */
export function inferMimeType(filename: string, declared: string | undefined): string {
  const clean = (declared ?? "").split(";")[0].trim().toLowerCase();
  const extension = filename.includes(".") ? filename.split(".").pop()!.toLowerCase() : "";
  const implied = MIME_BY_EXTENSION.get(extension);
  // A part without Content-Type reads as text/plain (RFC 7578 default), so a known extension wins over it.
  if (GENERIC_MIME.has(clean) || (clean === "text/plain" && implied !== undefined)) {
    return implied ?? "application/octet-stream";
  }
  return clean;
}

export function mediaTypeOfMime(mime: string): MediaType {
  const top = mime.split("/")[0];
  return top === "image" || top === "video" || top === "audio" ? top : "file";
}
