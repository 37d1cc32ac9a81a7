/**
 * An answer's body as the bytes its `Content-Encoding` stands for. undici's `request` hands the body over
 * as it came off the wire, compressed or not; a proxy may compress an answer the client never asked to
 * have compressed (HTTP lets it: a request without Accept-Encoding accepts any coding), so the client
 * decodes gzip, deflate and br itself, never to more than the client's cap on one answer (a gzip bomb of
 * 1 MB would otherwise become gigabytes).
 *
 * A body compressed without saying so (gzip's magic bytes, no Content-Encoding) is not decoded: HTTP
 * says the body is what its headers say, and a proxy that garbles that much of an answer may garble more
 * that no guess would notice. It is reported as a body the client cannot decode, which the retry policy
 * treats like any answer that cannot be read.
 */
import { promisify } from "node:util";
import { brotliDecompress, gunzip, inflate, inflateRaw, type ZlibOptions } from "node:zlib";
import { terminalSafe } from "./terminal-safe";

/** The decoded body would pass the cap: how far it got is not known, only that it is too large. */
export class DecodedTooLarge extends Error {
  constructor(readonly coding: string) {
    super(`the ${coding} body decodes to more than the cap`);
  }
}

type Decoder = (bytes: Buffer, options: ZlibOptions) => Promise<Buffer>;

const gunzipAsync = promisify(gunzip) as Decoder;
const inflateAsync = promisify(inflate) as Decoder;
const inflateRawAsync = promisify(inflateRaw) as Decoder;
const brotliAsync = promisify(brotliDecompress) as Decoder;

/** Servers disagree on what "deflate" holds (RFC 9110 says zlib; some send raw deflate): read both. */
const inflateEither: Decoder = (bytes, options) =>
  inflateAsync(bytes, options).catch((err: unknown) => {
    if ((err as { code?: string }).code !== "Z_DATA_ERROR") throw err;
    return inflateRawAsync(bytes, options);
  });

const DECODERS: Readonly<Record<string, Decoder>> = {
  gzip: gunzipAsync,
  "x-gzip": gunzipAsync,
  deflate: inflateEither,
  br: brotliAsync,
};

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

export type DecodedBody = { bytes: Buffer } | { undecodable: string };

/**
 * The body decoded, coding by coding (the last one applied is undone first), or why it cannot be.
 * Throws DecodedTooLarge when a step would produce more than `maxBytes`.
 */
export async function decodeBody(
  raw: Buffer,
  contentEncoding: string | undefined,
  maxBytes: number,
): Promise<DecodedBody> {
  const codings = (contentEncoding ?? "")
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity");
  if (codings.length === 0) {
    return raw.subarray(0, 2).equals(GZIP_MAGIC)
      ? {
          undecodable:
            "gzip-compressed without a Content-Encoding header (a proxy compressed it without saying so)",
        }
      : { bytes: raw };
  }
  let bytes = raw;
  for (const coding of codings.reverse()) {
    const decode = DECODERS[coding];
    if (!decode) {
      return { undecodable: `encoded as "${terminalSafe(coding, 40)}", which the client does not decode` };
    }
    try {
      bytes = await decode(bytes, { maxOutputLength: maxBytes });
    } catch (err) {
      if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") throw new DecodedTooLarge(coding);
      return {
        undecodable: `declared ${coding} but does not decode (${terminalSafe((err as Error).message, 80)})`,
      };
    }
  }
  return { bytes };
}
