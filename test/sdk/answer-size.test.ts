/**
 * What the client reads of one answer: at most maxResponseBytes, so an endless or huge body ends at the
 * cap (or at the request timeout, whichever comes first) instead of filling memory. A read fails with
 * ResponseTooLargeError and is never retried; a call that is not safe to repeat fails with
 * OutcomeUnknownError, since its status line came and the cloud may have done the work.
 */
import {
  collect,
  ConnectionError,
  DEFAULT_MAX_RESPONSE_BYTES,
  GpuCloudClient,
  InputValidationError,
  OutcomeUnknownError,
  ResponseTooLargeError,
  TimeoutError,
  type RequestEvent,
} from "pulumi-gpucloud/sdk";
import { endlessBody, foreignServer, proxyTo, type ForeignServer } from "./foreign-server";
import { cloudFor, countCalls, failure, KEY } from "./harness";

const SMALL_CAP = 64 * 1024;
const CREATE = "/instance/create_by_pod";

/** A client of `server` that gives up on the first failure and keeps its events. */
function clientOf(
  server: ForeignServer,
  more: Partial<ConstructorParameters<typeof GpuCloudClient>[0]> = {},
) {
  const events: RequestEvent[] = [];
  const client = new GpuCloudClient({
    baseUrl: server.url,
    apiKey: KEY,
    retryBaseDelayMs: 1,
    retryMaxDelayMs: 1,
    // Far longer than any cap takes to reach over loopback, so only the cap can end these answers.
    timeoutMs: 60_000,
    onRequest: (event) => events.push(event),
    ...more,
  });
  return { client, events };
}

describe("an answer larger than the client reads", () => {
  const servers: ForeignServer[] = [];
  const clients: GpuCloudClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  const serve = async (answer: Parameters<typeof foreignServer>[0]) => {
    const server = await foreignServer(answer);
    servers.push(server);
    return server;
  };
  const connect = (server: ForeignServer, more: Parameters<typeof clientOf>[1] = {}) => {
    const made = clientOf(server, more);
    clients.push(made.client);
    return made;
  };

  it("ends an endless body at the cap: ResponseTooLargeError naming the path, the cap and the option, sent once", async () => {
    let written: Promise<number> | undefined;
    const server = await serve((_req, res) => (written = endlessBody(res)));
    const { client, events } = connect(server, { maxResponseBytes: SMALL_CAP });
    const err = await failure(client.instances.list({ page: 1, page_size: 100 }));
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect(err).not.toBeInstanceOf(ConnectionError);
    expect(err.message).toContain(
      "the answer to GET /instance/list?page=1&page_size=100 (HTTP 200) is larger than 65536 bytes",
    );
    expect(err.message).toContain("raise maxResponseBytes (an option of the SDK's GpuCloudClient)");
    expect((err as ResponseTooLargeError).limitBytes).toBe(SMALL_CAP);
    expect(server.hits).toHaveLength(1);
    expect(events.map((e) => [e.status, e.error])).toEqual([[200, err.message]]);
    // The client hung up instead of reading on: what the server got rid of is the cap and what the
    // sockets between them hold, not the minute of reading the timeout would have allowed.
    expect(await written).toBeLessThan(SMALL_CAP + 32 * 1024 * 1024);
  });

  it("reads an answer of exactly the cap, and refuses one byte more", async () => {
    const page = { code: 0, msg: "success", data: { instance_list: [], total: 0 } };
    const exact = JSON.stringify(page);
    let padding = "";
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
      res.end(exact + padding);
    });
    const { client } = connect(server, { maxResponseBytes: 1024 });
    padding = " ".repeat(1024 - exact.length);
    await expect(client.instances.list()).resolves.toEqual({ instance_list: [], total: 0 });
    padding += " ";
    expect(await failure(client.instances.list())).toBeInstanceOf(ResponseTooLargeError);
  });

  it("refuses a 900 MB body by its Content-Length before reading any of it, not as a lost connection", async () => {
    const announce = 900 * 1024 * 1024;
    let written: Promise<number> | undefined;
    const server = await serve((_req, res) => (written = endlessBody(res, { announce })));
    const { client } = connect(server);
    const err = await failure(client.account.balance());
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect((err as ResponseTooLargeError).announcedBytes).toBe(announce);
    expect(err.message).toContain(
      `(HTTP 200, announced as ${announce} bytes (900 MiB)) is larger than ${DEFAULT_MAX_RESPONSE_BYTES} bytes (64 MiB)`,
    );
    expect(err.message).not.toMatch(/ERR_STRING_TOO_LONG/);
    expect(server.hits).toHaveLength(1);
    expect(await written).toBeLessThan(32 * 1024 * 1024);
  });

  it("ends an unannounced endless body at the default cap of 64 MiB", async () => {
    let written: Promise<number> | undefined;
    const server = await serve((_req, res) => (written = endlessBody(res)));
    const { client } = connect(server);
    const err = await failure(client.account.balance());
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect(err.message).toContain(`is larger than ${DEFAULT_MAX_RESPONSE_BYTES} bytes (64 MiB)`);
    expect(await written).toBeGreaterThan(DEFAULT_MAX_RESPONSE_BYTES);
  });

  it("is final for a wait too: a long wait does not keep asking for an answer it cannot read", async () => {
    const server = await serve((_req, res) => void endlessBody(res));
    const { client } = connect(server, { maxResponseBytes: SMALL_CAP });
    const err = await failure(client.instances.waitForStatus("i-1", [2], { timeoutMs: 60_000 }));
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect(server.hits).toHaveLength(1);
  });

  it("ends a trickling endless body at the request timeout when the cap is not reached first", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"code":0,"msg":"success","data":{"pad":"');
      const drip = setInterval(() => res.write("x"), 20);
      res.once("close", () => clearInterval(drip));
    });
    const { client } = connect(server, { timeoutMs: 300, maxRetries: 0 });
    const err = await failure(client.account.balance());
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.message).toContain("no answer within 300 ms");
  });

  it("refuses a maxResponseBytes that is not a whole number of bytes a text can hold, naming the option", () => {
    for (const bad of [0, 1023, 1.5, 2 ** 40, Number.NaN, "64MB"]) {
      const make = () =>
        new GpuCloudClient({ baseUrl: "http://127.0.0.1:1", maxResponseBytes: bad as number });
      expect(make).toThrow(InputValidationError);
      expect(make).toThrow(/maxResponseBytes: must be an integer number of bytes from 1024 to \d+/);
    }
  });
});

describe("a write whose answer is larger than the client reads", () => {
  const cloud = cloudFor();
  let proxy: ForeignServer;
  let through: GpuCloudClient;
  let written: Promise<number> | undefined;
  beforeAll(async () => {
    // The emulator does the work; its answer is replaced by a body without end.
    proxy = await proxyTo(cloud().url, (req, res) => {
      if (!/\/instance\/(create_by_pod|destroy)/.test(req.url ?? "")) return false;
      written = endlessBody(res);
      return true;
    });
    through = cloud().client({ baseUrl: proxy.url, maxResponseBytes: SMALL_CAP });
  });
  afterAll(() => proxy.close());
  beforeEach(() => cloud().clearRequests());

  it("fails a create with OutcomeUnknownError caused by ResponseTooLargeError, after exactly one request", async () => {
    const direct = cloud().client();
    const gpu = (await direct.catalogue.gpus()).gpu_list[0].gpu_uuid;
    const pod = (await collect(direct.catalogue.podsAll()))[0].uuid;

    const err = await failure(through.instances.createByPod({ pod_uuid: pod, gpu_uuid: gpu, gpu_nums: 1 }));
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect(err.cause).toBeInstanceOf(ResponseTooLargeError);
    expect(err.message).toContain(
      `the request was sent but the answer to POST ${CREATE} (HTTP 200) is larger than 65536 bytes, ` +
        "the most the client reads of one answer (maxResponseBytes), so it was not read",
    );
    expect(err.message).toContain("It was not retried");
    expect(countCalls(await cloud().requests(), CREATE)).toBe(1);
    expect((await direct.instances.list()).total).toBe(1);
    expect(await written).toBeLessThan(SMALL_CAP + 32 * 1024 * 1024);
  });

  it("never resends a destroy whose answer is too large, which a lost connection would be", async () => {
    const [instance] = (await cloud().client().instances.list()).instance_list;
    const err = await failure(through.instances.destroy(instance.instance_uuid));
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect(err).not.toBeInstanceOf(OutcomeUnknownError);
    expect(countCalls(await cloud().requests(), "/instance/destroy")).toBe(1);
  });
});
