/**
 * `npm run bench:memory`: what one answer without end costs the SDK's client. A server in this process
 * answers with a body that never ends (chunked, or under a Content-Length of 900 MB it never reaches);
 * a client in a child process, so that its memory is its own, reads it with a cap (maxResponseBytes)
 * and reports how it failed, how long that took and its peak memory. Before the cap the same endless
 * body took a client to 4.1 GB in 5 s. The gzip variants send the body compressed, with
 * Content-Encoding: gzip: the cap holds for what the client decodes (an endless gzip stream is a gzip
 * bomb without end).
 *   node dist/bench/answer-memory.js [--out bench/answer-memory.json]
 */
import { fork } from "node:child_process";
import * as fs from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { createGzip } from "node:zlib";
import { DEFAULT_MAX_RESPONSE_BYTES, GpuCloudClient } from "../sdk";

const MIB = 1024 * 1024;

/** The head of an endless body: the envelope of a success whose data never ends. */
const ENDLESS_HEAD = '{"code":0,"msg":"success","data":{"pad":"';
const ENDLESS_CHUNK = Buffer.alloc(64 * 1024, "x");

/**
 * Answers with `status` and a body that never ends, written as fast as the client reads it (chunked,
 * or under a Content-Length it never reaches when `announce` is given). Resolves with the bytes written
 * once the client hangs up.
 */
export function endlessBody(
  res: ServerResponse,
  { status = 200, announce }: { status?: number; announce?: number } = {},
): Promise<number> {
  res.writeHead(status, {
    "content-type": "application/json",
    ...(announce === undefined ? {} : { "content-length": String(announce) }),
  });
  let written = 0;
  const write = (chunk: Buffer | string): boolean => {
    written += Buffer.byteLength(chunk);
    return res.write(chunk);
  };
  return new Promise((resolve) => {
    res.once("close", () => resolve(written));
    const pump = (): void => {
      while (!res.destroyed && write(ENDLESS_CHUNK));
      if (!res.destroyed) res.once("drain", pump);
    };
    write(ENDLESS_HEAD);
    pump();
  });
}

/** A success of `bytes` in all, its data padded: the largest answer a cap lets through, read whole. */
function paddedSuccess(bytes: number): string {
  const tail = '","balance":1,"card_balance":0}}';
  return ENDLESS_HEAD + "x".repeat(bytes - ENDLESS_HEAD.length - tail.length) + tail;
}

function wholeBody(res: ServerResponse, bytes: number): Promise<number> {
  const body = paddedSuccess(bytes);
  res.writeHead(200, { "content-type": "application/json", "content-length": String(body.length) });
  res.end(body);
  return Promise.resolve(body.length);
}

/**
 * A padded success of `bytes`, or one without end, gzip-compressed with Content-Encoding: gzip. Resolves
 * with the bytes fed to the compressor (what the client would decode) once the answer is over.
 */
function gzipBody(res: ServerResponse, bytes?: number): Promise<number> {
  res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
  const gzip = createGzip();
  gzip.pipe(res);
  let fed = 0;
  const write = (chunk: Buffer | string): boolean => {
    fed += Buffer.byteLength(chunk);
    return gzip.write(chunk);
  };
  return new Promise((resolve) => {
    res.once("close", () => {
      gzip.destroy();
      resolve(fed);
    });
    if (bytes !== undefined) {
      write(paddedSuccess(bytes));
      gzip.end();
      return;
    }
    const pump = (): void => {
      while (!res.destroyed && write(ENDLESS_CHUNK));
      if (!res.destroyed) gzip.once("drain", pump);
    };
    write(ENDLESS_HEAD);
    pump();
  });
}

interface Variant {
  name: string;
  /** The client's maxResponseBytes; undefined keeps the default. */
  cap?: number;
  /** The Content-Length the answer announces; undefined sends it chunked. */
  announce?: number;
  /** A whole answer of this many bytes instead of an endless one. */
  whole?: number;
  /** Sent gzip-compressed, with Content-Encoding: gzip. */
  gzip?: boolean;
}

const VARIANTS: Variant[] = [
  { name: "60 MiB answer, read whole", whole: 60 * MIB },
  { name: "endless, default cap" },
  { name: "endless, cap 16 MiB", cap: 16 * MIB },
  { name: "endless, cap 256 MiB", cap: 256 * MIB },
  { name: "900 MB announced, default cap", announce: 900 * MIB },
  { name: "60 MiB answer gzipped, read whole", whole: 60 * MIB, gzip: true },
  { name: "endless gzip (a bomb), default cap", gzip: true },
];

/** What the client process reports of one call. */
interface ClientFigures {
  outcome: string;
  ms: number;
  rssBeforeMiB: number;
  peakRssMiB: number;
  peakHeapUsedMiB: number;
  peakArrayBuffersMiB: number;
}

interface Figure extends ClientFigures {
  variant: string;
  capBytes: number;
  /** What the server got rid of before the client hung up: what it read plus the sockets' buffers. */
  servedMiB: number;
}

const mib = (bytes: number): number => Math.round((bytes / MIB) * 10) / 10;

/** The child's side: one call to `url` with `cap`, sampling memory while it runs. */
async function measureClient(url: string, cap: number | undefined): Promise<ClientFigures> {
  const before = process.memoryUsage();
  const peak = { rss: before.rss, heapUsed: before.heapUsed, arrayBuffers: before.arrayBuffers };
  const sample = (): void => {
    const now = process.memoryUsage();
    peak.rss = Math.max(peak.rss, now.rss);
    peak.heapUsed = Math.max(peak.heapUsed, now.heapUsed);
    peak.arrayBuffers = Math.max(peak.arrayBuffers, now.arrayBuffers);
  };
  const sampler = setInterval(sample, 2);
  const client = new GpuCloudClient({
    baseUrl: url,
    apiKey: "bench-key",
    maxRetries: 0,
    maxResponseBytes: cap,
  });
  const started = performance.now();
  const outcome = await client.account.balance().then(
    () => "answered",
    (err: Error) => err.name,
  );
  const ms = Math.round(performance.now() - started);
  sample();
  clearInterval(sampler);
  await client.close();
  // The kernel's high-water mark catches a peak between two samples.
  const maxRss = process.resourceUsage().maxRSS * 1024;
  return {
    outcome,
    ms,
    rssBeforeMiB: mib(before.rss),
    peakRssMiB: mib(Math.max(peak.rss, maxRss)),
    peakHeapUsedMiB: mib(peak.heapUsed),
    peakArrayBuffersMiB: mib(peak.arrayBuffers),
  };
}

/** Runs one variant: the server here, the client in a child process of its own. */
async function runVariant(variant: Variant): Promise<Figure> {
  let served: Promise<number> = Promise.resolve(0);
  const server = createServer((req, res) => {
    req.resume();
    if (variant.gzip) served = gzipBody(res, variant.whole);
    else if (variant.whole !== undefined) served = wholeBody(res, variant.whole);
    else served = endlessBody(res, { announce: variant.announce });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const child = fork(__filename, ["--client", url, String(variant.cap ?? "")], { stdio: "inherit" });
    const figures = await new Promise<ClientFigures>((resolve, reject) => {
      child.once("message", (message) => resolve(message as ClientFigures));
      child.once("exit", (code) =>
        reject(new Error(`the client process exited with ${code} before reporting`)),
      );
    });
    return {
      variant: variant.name,
      capBytes: variant.cap ?? DEFAULT_MAX_RESPONSE_BYTES,
      ...figures,
      servedMiB: mib(await served),
    };
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function table(figures: Figure[]): string {
  const header = [
    "answer",
    "cap MiB",
    "outcome",
    "ms",
    "RSS before",
    "peak RSS",
    "peak heap",
    "peak buffers",
    "served MiB",
  ];
  const rows = figures.map((f) => [
    f.variant,
    String(mib(f.capBytes)),
    f.outcome,
    String(f.ms),
    String(f.rssBeforeMiB),
    String(f.peakRssMiB),
    String(f.peakHeapUsedMiB),
    String(f.peakArrayBuffersMiB),
    String(f.servedMiB),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, c) => cell.padEnd(widths[c]))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line), "(memory in MiB, of the client's process)"].join("\n");
}

async function main(): Promise<void> {
  if (process.argv[2] === "--client") {
    const cap = process.argv[4] === "" ? undefined : Number(process.argv[4]);
    process.send?.(await measureClient(process.argv[3], cap));
    return;
  }
  const { values } = parseArgs({ options: { out: { type: "string", default: "bench/answer-memory.json" } } });
  const figures: Figure[] = [];
  for (const variant of VARIANTS) figures.push(await runVariant(variant));
  process.stdout.write(`${table(figures)}\n`);
  fs.writeFileSync(values.out, `${JSON.stringify({ node: process.version, figures }, null, 2)}\n`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
