/**
 * An answer's body as the bytes its `Content-Encoding` stands for. undici's `request` hands the body over
 * as it came off the wire, compressed or not; a proxy may compress an answer the client never asked to
 * have compressed (HTTP lets it: a request without Accept-Encoding accepts any coding), so the client
 * decodes gzip, deflate (the zlib format RFC 9110 names) and br itself, as the body streams in, and stops
 * the moment what it decoded passes the client's cap on one answer: a gzip bomb of 1 MB would otherwise
 * become gigabytes, and an endless one would keep a client busy until its timeout.
 *
 * A body compressed without saying so (gzip's magic bytes, no Content-Encoding) is not decoded: HTTP
 * says the body is what its headers say, and a proxy that garbles that much of an answer may garble more
 * that no guess would notice. It is reported as a body the client cannot decode, which the retry policy
 * treats like any answer that cannot be read.
 */
import { Writable, type Readable, type Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { terminalSafe } from "./terminal-safe";

/** What was decoded passed the cap (or the body itself did, when it came without a coding). */
export class DecodedTooLarge extends Error {
  constructor(readonly coding: string | undefined) {
    super(`the body${coding === undefined ? "" : ` (${coding})`} is larger than the cap`);
  }
}

const DECODERS: Readonly<Record<string, () => Transform>> = {
  gzip: createGunzip,
  "x-gzip": createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

export type DecodedBody = { bytes: Buffer } | { undecodable: string };

/** The codings of a Content-Encoding header, in the order they were applied; identity dropped. */
function codingsOf(contentEncoding: string | undefined): string[] {
  return (contentEncoding ?? "")
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity");
}

/** A sink that keeps what it is given, up to `maxBytes`, and fails with DecodedTooLarge beyond. */
function cappedSink(maxBytes: number, coding: string | undefined): { sink: Writable; bytes: () => Buffer } {
  const chunks: Buffer[] = [];
  let size = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > maxBytes) return done(new DecodedTooLarge(coding));
      chunks.push(chunk);
      done();
    },
  });
  return { sink, bytes: () => Buffer.concat(chunks, size) };
}

/**
 * The body read and decoded, coding by coding (the last one applied is undone first), or why it cannot
 * be. Throws DecodedTooLarge once more than `maxBytes` come out; an error of the body itself (the
 * connection lost, undici's own cap) is thrown as it came.
 */
export async function decodeBody(
  body: Readable,
  contentEncoding: string | undefined,
  maxBytes: number,
): Promise<DecodedBody> {
  const codings = codingsOf(contentEncoding);
  const unknown = codings.find((c) => !Object.hasOwn(DECODERS, c));
  if (unknown !== undefined) {
    body.on("error", () => undefined).destroy();
    return { undecodable: `encoded as "${terminalSafe(unknown, 40)}", which the client does not decode` };
  }
  const coding = codings.length === 0 ? undefined : codings.join(", ");
  const decoders = [...codings].reverse().map((c) => DECODERS[c]());
  let decoderFailure: Error | undefined;
  for (const decoder of decoders) decoder.once("error", (err: Error) => (decoderFailure ??= err));
  const { sink, bytes } = cappedSink(maxBytes, coding);
  try {
    await pipeline([body, ...decoders, sink]);
  } catch (err) {
    // The sink's refusal reaches the decoders too, as pipeline tears them down: it stays a refusal.
    if (err instanceof DecodedTooLarge || decoderFailure === undefined || err !== decoderFailure) throw err;
    return {
      undecodable: `declared ${coding} but does not decode (${terminalSafe(decoderFailure.message, 80)})`,
    };
  }
  const decoded = bytes();
  if (coding === undefined && decoded.subarray(0, 2).equals(GZIP_MAGIC)) {
    return {
      undecodable:
        "gzip-compressed without a Content-Encoding header (a proxy compressed it without saying so)",
    };
  }
  return { bytes: decoded };
}
