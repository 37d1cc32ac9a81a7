/**
 * The assets room's upload reader: measures a multipart file as it streams (size, sha256, first bytes) and
 * stops at the limit, so no upload sits in memory.
 */
import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import { altError } from "../core/http/errors";
import { MAX_ASSET_BYTES } from "./state";
import { UploadedFile } from "./store";

const HEAD_BYTES = 64;

/**
 * Reads an upload stream chunk by chunk, keeping only its size, a sha256 and the first bytes, and
 * stops with 413 as soon as the byte count passes the limit (100 MB per file, docs/design/cloud-api.md#limits),
 * so a large upload never sits in memory.
 */
export async function measureUpload(
  stream: Readable & { truncated?: boolean },
  filename: string,
  declaredMime: string | undefined,
  limit = MAX_ASSET_BYTES,
): Promise<UploadedFile> {
  const hash = createHash("sha256");
  let size = 0;
  let head = Buffer.alloc(0);
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit || stream.truncated === true) throw fileTooLarge(limit);
    hash.update(chunk);
    if (head.length < HEAD_BYTES) head = Buffer.concat([head, chunk.subarray(0, HEAD_BYTES - head.length)]);
  }
  // busboy stops at its own limit and marks the stream truncated instead of passing the extra bytes.
  if (stream.truncated === true) throw fileTooLarge(limit);
  return {
    filename,
    declaredMime,
    sizeBytes: size,
    sha256: hash.digest("hex"),
    head: head.toString("base64"),
  };
}

export function fileTooLarge(limit: number) {
  return altError(413, "payload_too_large", `file too large: at most ${limit} bytes per file`, {}, "file");
}
