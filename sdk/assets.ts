/** Assets: uploading workflow and model-run input files, and reading them back. */
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, extname } from "node:path";
import { Readable } from "node:stream";
import { z } from "zod";
import { endpoint, refusal, send, type Request } from "./endpoints";
import type { InputIssue } from "./errors";
import type { CallOptions, RequestBody, Transport } from "./transport";
import { issuesOf, rule } from "./validation";
import { int, whenSet } from "./zod-helpers";

export const AssetSchema = z.looseObject({
  id: whenSet(z.string()),
  asset_id: z.string().describe("asset_<token>"),
  asset_uri: z.string().describe("asset://<asset_id>: the value to place in inputs"),
  url: whenSet(z.string()),
  content_url: whenSet(z.string()),
  signed_url: whenSet(z.string()),
  media_type: whenSet(z.string()).describe("image, video, audio, file"),
  mime_type: whenSet(z.string()),
  size_bytes: whenSet(int),
  purpose: whenSet(z.string()),
  persistent: whenSet(z.boolean()),
  expires_at: whenSet(z.string()).describe("ISO 8601 with offset"),
  status: whenSet(z.string()).describe("confirmed means usable"),
  original_filename: whenSet(z.string()),
});
export type Asset = z.infer<typeof AssetSchema>;

// docs/design/cloud-api.md#limits
/** At most 100 MB per file. */
export const MAX_ASSET_BYTES = 100 * 1024 * 1024;
export const MEDIA_TYPES = ["image", "video", "audio", "file"] as const;

export interface UploadOptions extends CallOptions {
  /** Name sent with the file; defaults to the path's base name or "upload.bin". */
  filename?: string;
  media_type?: (typeof MEDIA_TYPES)[number];
  purpose?: "temp_input";
  ttl_hours?: number;
  /** MIME type of the file part; defaults from the file name's extension. */
  mime_type?: string;
  /** Per-request timeout for this upload; defaults to the client's timeoutMs. */
  timeoutMs?: number;
}

const MIME_BY_EXTENSION = new Map<string, string>([
  [".png", "image/png"],
  [".jpg", "image/jpeg"],
  [".jpeg", "image/jpeg"],
  [".webp", "image/webp"],
  [".gif", "image/gif"],
  [".mp4", "video/mp4"],
  [".mov", "video/quicktime"],
  [".webm", "video/webm"],
  [".mp3", "audio/mpeg"],
  [".wav", "audio/wav"],
  [".ogg", "audio/ogg"],
  [".flac", "audio/flac"],
  [".txt", "text/plain"],
  [".json", "application/json"],
  [".pdf", "application/pdf"],
  [".zip", "application/zip"],
]);

function mimeFor(filename: string): string {
  return MIME_BY_EXTENSION.get(extname(filename).toLowerCase()) ?? "application/octet-stream";
}

function quoteName(name: string): string {
  return name.replace(/["\r\n\\]/g, "_");
}

type ChunkSource = () => AsyncIterable<Uint8Array>;

interface PreparedSource {
  filename: string;
  size?: number;
  chunks: ChunkSource;
  /** A stream can be read once, so an upload from one is never resent. */
  replayable: boolean;
}

function tooLarge(size: number): InputIssue {
  return {
    field: "file",
    reason: `is ${size} bytes; the limit is ${MAX_ASSET_BYTES} bytes (100 MB) per file`,
  };
}

async function* limited(source: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  let seen = 0;
  for await (const chunk of source) {
    seen += chunk.length;
    if (seen > MAX_ASSET_BYTES) throw refusal(ENDPOINTS.upload, [tooLarge(seen)]);
    yield chunk;
  }
}

async function prepare(
  source: string | Buffer | Readable,
  filename: string | undefined,
): Promise<PreparedSource> {
  if (typeof source === "string") {
    const info = await stat(source).catch((err: NodeJS.ErrnoException) => {
      throw refusal(ENDPOINTS.upload, [
        { field: "file", reason: `cannot read ${source}: ${err.code ?? err.message}` },
      ]);
    });
    if (!info.isFile())
      throw refusal(ENDPOINTS.upload, [{ field: "file", reason: `${source} is not a file` }]);
    return {
      filename: filename ?? basename(source),
      size: info.size,
      chunks: () => createReadStream(source),
      replayable: true,
    };
  }
  if (Buffer.isBuffer(source)) {
    return {
      filename: filename ?? "upload.bin",
      size: source.length,
      chunks: async function* () {
        yield source;
      },
      replayable: true,
    };
  }
  if (source instanceof Readable) {
    const streamPath = (source as Readable & { path?: unknown }).path;
    const name = filename ?? (typeof streamPath === "string" ? basename(streamPath) : "upload.bin");
    return { filename: name, chunks: () => limited(source), replayable: false };
  }
  throw refusal(ENDPOINTS.upload, [
    { field: "file", reason: "must be a file path, a Buffer or a Readable stream" },
  ]);
}

/** Streams a multipart/form-data body without buffering the file. */
function multipart(fields: Record<string, string>, file: PreparedSource, mimeType: string): RequestBody {
  const boundary = `----gpucloud${randomBytes(12).toString("hex")}`;
  const fieldParts = Object.entries(fields)
    .map(
      ([name, value]) =>
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
    )
    .join("");
  const head = Buffer.from(
    `${fieldParts}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quoteName(file.filename)}"\r\nContent-Type: ${mimeType}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  async function* body(): AsyncIterable<Uint8Array> {
    yield head;
    yield* file.chunks();
    yield tail;
  }
  return {
    body: Readable.from(body(), { objectMode: false }),
    contentType: `multipart/form-data; boundary=${boundary}`,
    contentLength: file.size === undefined ? undefined : head.length + file.size + tail.length,
  };
}

/** Problems with an upload's options, found before the file is read. */
function uploadOptionIssues({ media_type, purpose, ttl_hours }: UploadOptions): InputIssue[] {
  return issuesOf(
    rule(
      "media_type",
      media_type === undefined || MEDIA_TYPES.includes(media_type),
      `must be one of ${MEDIA_TYPES.join(", ")}`,
    ),
    rule("purpose", purpose === undefined || purpose === "temp_input", "only temp_input is supported"),
    rule(
      "ttl_hours",
      ttl_hours === undefined || (Number.isInteger(ttl_hours) && ttl_hours > 0),
      "must be a positive integer",
    ),
  );
}

/** An upload of a prepared file: its size checked, its form fields, a body made afresh for each attempt. */
function uploadRequest(file: PreparedSource, options: UploadOptions): Request {
  if (file.size !== undefined && file.size > MAX_ASSET_BYTES) return { issues: [tooLarge(file.size)] };
  const fields: Record<string, string> = {};
  if (options.media_type) fields.media_type = options.media_type;
  if (options.purpose) fields.purpose = options.purpose;
  if (options.ttl_hours !== undefined) fields.ttl_hours = String(options.ttl_hours);
  const mimeType = options.mime_type ?? mimeFor(file.filename);
  return {
    body: () => multipart(fields, file, mimeType),
    maxRetries: file.replayable ? undefined : 0,
    timeoutMs: options.timeoutMs,
  };
}

/** Every endpoint of the area, once. An upload is `unsafe` (it makes an asset), and a stream is sent once. */
const ENDPOINTS = {
  upload: endpoint("POST /assets", "unsafe", AssetSchema, {
    action: (file: PreparedSource, _options: UploadOptions) => `upload asset ${file.filename}`,
    checkAction: "upload asset",
    request: uploadRequest,
    reconcile: "Uploading again is harmless apart from a second temporary asset.",
  }),
  get: endpoint("GET /assets/{asset_id}", "read", AssetSchema, {
    action: (asset_id: string) => `read asset ${asset_id}`,
    request: (asset_id) => ({ segments: { asset_id } }),
  }),
};

export class Assets {
  constructor(private readonly transport: Transport) {}

  /**
   * Upload a file from a path, a Buffer or a Readable stream. Sizes known up front (path, Buffer) are
   * checked against the 100 MB limit before anything is sent; a stream is stopped once it passes it.
   */
  async upload(source: string | Buffer | Readable, options: UploadOptions = {}): Promise<Asset> {
    const issues = uploadOptionIssues(options);
    if (issues.length > 0) throw refusal(ENDPOINTS.upload, issues);
    const file = await prepare(source, options.filename);
    return send(this.transport, ENDPOINTS.upload, [file, options], options);
  }

  get(asset_id: string, options: CallOptions = {}): Promise<Asset> {
    return send(this.transport, ENDPOINTS.get, [asset_id], options);
  }
}
