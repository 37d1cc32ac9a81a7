/**
 * Answers the client meets behind proxies and gateways, played by the emulator's answer faults (the call
 * is carried out, then its answer changes): optional fields sent as null are read as absent; a gzip body
 * that says so is decoded, never past maxResponseBytes; an HTML page with HTTP 200, JSON cut off half way
 * or gzip without Content-Encoding cannot be read, so a read is asked again and a create, power or save
 * call fails with OutcomeUnknownError (the cloud did the work). Deflate, br and a gzip bomb come from a
 * proxy in front of the emulator, which answers none of them itself.
 */
import type { ServerResponse } from "node:http";
import { brotliCompressSync, createGzip, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import {
  collect,
  GpuCloudError,
  isTransientError,
  OutcomeUnknownError,
  ResponseTooLargeError,
  UnreadableAnswerError,
  type GpuCloudClient,
} from "pulumi-gpucloud/sdk";
import { foreignServer, POD_PAGE, proxyTo, type ForeignServer } from "./foreign-server";
import { cloudFor, countCalls, failure, OTHER_KEY } from "./harness";

const CREATE = "/instance/create_by_pod";
const UNREADABLE = ["html_after_commit", "truncated_after_commit", "unlabelled_gzip_after_commit"] as const;
/** How each unreadable kind reads in a message. */
const SHOWN: Record<(typeof UNREADABLE)[number], string> = {
  html_after_commit: 'an HTML page ("502 Bad Gateway")',
  truncated_after_commit: "JSON that breaks off or does not parse",
  unlabelled_gzip_after_commit: "gzip-compressed without a Content-Encoding header",
};

describe("answers the client cannot take at face value", () => {
  const cloud = cloudFor();
  let client: GpuCloudClient;
  let spec: { pod_uuid: string; gpu_uuid: string; gpu_nums: number };
  beforeAll(async () => {
    client = cloud().client();
    const gpu = (await client.catalogue.gpus()).gpu_list.find((g) => g.gpu_name === "4090D")!;
    spec = {
      pod_uuid: (await collect(client.catalogue.podsAll()))[0].uuid,
      gpu_uuid: gpu.gpu_uuid,
      gpu_nums: 1,
    };
  });
  beforeEach(() => cloud().reset());

  const listed = async () => (await collect(client.instances.listAll())).map((i) => i.instance_uuid);

  describe("null optional fields", () => {
    it("reads a create answered with every optional field null as the instance it made, without a title", async () => {
      await cloud().fault(CREATE, "nulls_after_commit", 1);
      const made = await client.instances.createByPod(spec);
      expect(made.title).toBeUndefined();
      expect(made.shutdown_regular).toBeUndefined();
      expect(made.gpu_name).toBeUndefined();
      expect(made.status).toBe(1);
      expect(await listed()).toEqual([made.instance_uuid]);
    });

    it("lists instances whose title, server_url, server_map and shutdown_regular are null, as untitled ones", async () => {
      const made = await client.instances.createByPod(spec);
      await client.instances.updateTitle(made.instance_uuid, "named");
      await cloud().fault("/instance/list", "nulls_after_commit", 1);
      const [instance] = await collect(client.instances.listAll());
      expect(instance).toMatchObject({ instance_uuid: made.instance_uuid, status: 1, gpu_nums: 1 });
      expect(instance.title).toBeUndefined();
      expect(instance.server_url).toBeUndefined();
      expect(instance.server_map).toBeUndefined();
      expect((await client.instances.info(made.instance_uuid)).title).toBe("named");
    });

    it("reads null fields in the pod list and the personal images alike", async () => {
      await cloud().fault("/pod/list", "nulls_after_commit", 1);
      const pods = await collect(client.catalogue.podsAll());
      expect(pods.length).toBeGreaterThan(0);
      expect(pods.every((p) => p.price === undefined && p.pod_tag === undefined && p.title !== "")).toBe(
        true,
      );
      await cloud().fault("/image/private/list", "nulls_after_commit", 1);
      expect(Array.isArray((await client.images.list()).image_list)).toBe(true);
    });
  });

  describe("a body compressed by a proxy", () => {
    it("decodes a create's gzip answer that says Content-Encoding: gzip, sent once", async () => {
      await cloud().fault(CREATE, "gzip_after_commit", 1);
      const made = await client.instances.createByPod(spec);
      expect(await listed()).toEqual([made.instance_uuid]);
      expect(countCalls(await cloud().requests(), CREATE)).toBe(1);
    });

    it.each([
      ["deflate", "the zlib format RFC 9110 names", deflateSync],
      ["br", "brotli", brotliCompressSync],
      ["gzip, br", "gzip, then brotli", (b: Buffer) => brotliCompressSync(gzipSync(b))],
    ])(
      "decodes Content-Encoding: %s (%s) from a proxy in front of the cloud",
      async (coding, _how, encode) => {
        const proxy = await proxyTo(cloud().url, (_req, res, forwarded) => {
          res.writeHead(forwarded.status, { "content-type": "application/json", "content-encoding": coding });
          res.end(encode(forwarded.body));
          return true;
        });
        const behind = cloud().client({ baseUrl: proxy.url });
        try {
          const made = await behind.instances.createByPod(spec);
          expect(await listed()).toEqual([made.instance_uuid]);
        } finally {
          await proxy.close();
        }
      },
    );
  });

  describe.each(UNREADABLE)("an answer that cannot be read (%s)", (kind) => {
    it("fails a create with OutcomeUnknownError caused by UnreadableAnswerError, sent once, the instance made", async () => {
      await cloud().fault(CREATE, kind, 1);
      const err = await failure(client.instances.createByPod(spec));
      expect(err).toBeInstanceOf(OutcomeUnknownError);
      expect(err.message).toContain("the request was sent but the answer could not be read (HTTP 200 with");
      expect(err.message).toContain(SHOWN[kind]);
      expect(err.message).toContain("so it may or may not have been carried out");
      expect(err.cause).toBeInstanceOf(UnreadableAnswerError);
      expect(countCalls(await cloud().requests(), CREATE)).toBe(1);
      expect(await listed()).toHaveLength(1);
    });

    it("fails a power call with OutcomeUnknownError, never a definite failure", async () => {
      const { instance_uuid } = await client.instances.createByPod(spec);
      await cloud().advance(60);
      await cloud().fault("/instance/shutdown", kind, 1);
      expect(await failure(client.instances.shutdown(instance_uuid))).toBeInstanceOf(OutcomeUnknownError);
      expect((await client.instances.info(instance_uuid)).status).toBe(21);
    });

    it("asks a read again and returns what the next answer says", async () => {
      const made = await client.instances.createByPod(spec);
      await cloud().fault("/instance/list", kind, 1);
      expect(await listed()).toEqual([made.instance_uuid]);
      expect(countCalls(await cloud().requests(), "/instance/list", "GET")).toBe(2);
    });

    it("asks an idempotent write again: a rename answered unreadably lands once and succeeds", async () => {
      const made = await client.instances.createByPod(spec);
      await cloud().fault("/instance/update_title", kind, 1);
      await client.instances.updateTitle(made.instance_uuid, "renamed");
      expect((await client.instances.info(made.instance_uuid)).title).toBe("renamed");
    });
  });

  it("fails a read with UnreadableAnswerError, transient as a 5xx is, once every retry met a gateway page", async () => {
    const impatient = cloud().client({ maxRetries: 2 });
    await cloud().fault("/instance/list", "html_after_commit", 3);
    const err = await failure(impatient.instances.list());
    expect(err).toBeInstanceOf(UnreadableAnswerError);
    expect(isTransientError(err)).toBe(true);
    expect(err.message).toContain(
      'answered with an HTML page ("502 Bad Gateway"), not the {code, msg, data} envelope',
    );
    expect(countCalls(await cloud().requests(), "/instance/list", "GET")).toBe(3);
  });

  it("submits a keyed model run again under the same key after an unreadable answer: one run, not two", async () => {
    await cloud().fault("/model-runs/videos", "truncated_after_commit", 1);
    const run = await client.modelRuns.submit({
      idempotency_key: "unreadable-once",
      inputs: { model: "demo-video", prompt: "a cat", generation_category: "text_to_video" },
    });
    const runs = await collect(client.modelRuns.listAll());
    expect(runs.map((r) => r.run_id)).toEqual([run.run_id]);
    expect(countCalls(await cloud().requests(), "/model-runs/videos")).toBe(2);
  });

  it("fails a create whose answer lacks instance_uuid with OutcomeUnknownError: the data is not as documented", async () => {
    const proxy = await proxyTo(cloud().url, (req, res, forwarded) => {
      if (!req.url?.endsWith(CREATE)) return false;
      const envelope = JSON.parse(forwarded.body.toString());
      delete envelope.data.instance_uuid;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(envelope));
      return true;
    });
    const behind = cloud().client({ baseUrl: proxy.url });
    try {
      const err = await failure(behind.instances.createByPod(spec));
      expect(err).toBeInstanceOf(OutcomeUnknownError);
      expect(err.message).toContain("data that does not match API v2: instance_uuid: Invalid input");
      expect(err.cause).toBeInstanceOf(UnreadableAnswerError);
      expect(await listed()).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  describe("compressed bodies of a server of its own", () => {
    const servers: ForeignServer[] = [];
    afterEach(async () => Promise.all(servers.splice(0).map((s) => s.close())));
    const serving = async (coding: string, write: (res: ServerResponse) => void) => {
      const server = await foreignServer((_req, res) => {
        res.writeHead(200, { "content-type": "application/json", "content-encoding": coding });
        write(res);
      });
      servers.push(server);
      return cloud().client({ baseUrl: server.url, maxRetries: 0, maxResponseBytes: 1 << 20 });
    };
    /** 64 MiB of JSON-looking text, about 64 KB once gzipped: a bomb for a client capped at 1 MiB. */
    const bomb = gzipSync(Buffer.concat([Buffer.from('{"code":0,"msg":"'), Buffer.alloc(64 << 20, 0x61)]));
    const bombing = async () => {
      const server = await foreignServer((_req, res) => {
        res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
        res.end(bomb);
      });
      servers.push(server);
      return cloud().client({ baseUrl: server.url, maxResponseBytes: 1 << 20 });
    };

    it("stops decoding at maxResponseBytes: a read fails with ResponseTooLargeError, asked once", async () => {
      const capped = await bombing();
      const err = await failure(capped.instances.list());
      expect(err).toBeInstanceOf(ResponseTooLargeError);
      expect(err.message).toContain(
        "(HTTP 200, gzip-encoded) is larger than 1048576 bytes (1 MiB) once decoded",
      );
      expect((err as ResponseTooLargeError).coding).toBe("gzip");
      expect(servers[0].hits).toHaveLength(1);
    });

    it("fails a create with OutcomeUnknownError caused by the ResponseTooLargeError", async () => {
      const capped = await bombing();
      const err = await failure(capped.instances.createByPod(spec));
      expect(err).toBeInstanceOf(OutcomeUnknownError);
      expect(err.cause).toBeInstanceOf(ResponseTooLargeError);
    });

    it("stops an endless gzip stream as soon as it decodes past the cap, long before its timeout", async () => {
      let sent: Promise<number> | undefined;
      const capped = await serving("gzip", (res) => {
        const gzip = createGzip();
        sent = new Promise((resolve) => res.once("close", () => resolve(gzip.bytesWritten)));
        gzip.pipe(res);
        const zeros = Buffer.alloc(64 * 1024);
        const pump = (): void => {
          while (!res.destroyed && gzip.write(zeros));
          if (!res.destroyed) gzip.once("drain", pump);
        };
        pump();
      });
      const err = await failure(capped.instances.list());
      expect(err).toBeInstanceOf(ResponseTooLargeError);
      // The server fed its compressor little more than the cap before the client hung up.
      expect(await sent).toBeLessThan(64 << 20);
    });

    it("reads deflate only in the zlib format RFC 9110 names: raw deflate is an answer it cannot read", async () => {
      const raw = await serving("deflate", (res) => res.end(deflateRawSync(JSON.stringify(POD_PAGE))));
      const err = await failure(raw.catalogue.pods());
      expect(err).toBeInstanceOf(UnreadableAnswerError);
      expect(err.message).toContain("a body it could not decode (declared deflate but does not decode (");
    });

    it("cannot read a gzip body cut short under a Content-Length that matches it", async () => {
      const whole = gzipSync(JSON.stringify(POD_PAGE));
      const cut = await serving("gzip", (res) => res.end(whole.subarray(0, whole.length - 8)));
      const err = await failure(cut.catalogue.pods());
      expect(err).toBeInstanceOf(UnreadableAnswerError);
      expect(err.message).toContain("declared gzip but does not decode (unexpected end of file)");
    });

    it("cannot read a coding it does not know, and says which", async () => {
      const zstd = await serving("zstd", (res) => res.end("(zstd bytes)"));
      const err = await failure(zstd.instances.list());
      expect(err).toBeInstanceOf(UnreadableAnswerError);
      expect(err).toBeInstanceOf(GpuCloudError);
      expect(err.message).toContain(
        'a body it could not decode (encoded as "zstd", which the client does not decode)',
      );
    });
  });

  it("keeps another user's key out of every message here", async () => {
    await cloud().fault(CREATE, "html_after_commit", 1);
    const err = await failure(cloud().client({ apiKey: OTHER_KEY }).instances.createByPod(spec));
    expect(`${err.message} ${String(err.cause)}`).not.toContain(OTHER_KEY);
  });
});
