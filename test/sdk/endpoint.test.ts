/**
 * Missing means missing: only the API's own answer that a resource does not exist is a NotFoundError.
 * A wrong base path on the emulator, a proxy's HTML 404 or a JSON 404 of another service is an
 * EndpointNotFoundError naming the URL and the fix, and a delete never takes it for "already gone".
 */
import {
  EndpointNotFoundError,
  GpuCloudClient,
  GpuCloudError,
  InputValidationError,
  NotFoundError,
} from "pulumi-gpucloud/sdk";
import { foreignServer, json, POD_PAGE, type ForeignServer } from "./foreign-server";
import { cloudFor, ERROR_MODES, failure, KEY } from "./harness";

describe.each(ERROR_MODES)("the emulator answering failures with %s statuses", (mode) => {
  const cloudIn = cloudFor({ errorStatus: mode });

  it("reports a wrong base path as EndpointNotFoundError naming the full URL and the fix", async () => {
    const wrong = cloudIn().client({ baseUrl: `${cloudIn().url}/api/open` });
    const err = await failure(wrong.instances.info("i-123"));
    expect(err).toBeInstanceOf(EndpointNotFoundError);
    expect(err).not.toBeInstanceOf(NotFoundError);
    const url = `${cloudIn().url}/api/open/api/open/v2/instance/info?instance_uuid=i-123`;
    expect((err as EndpointNotFoundError).url).toBe(url);
    expect(err.message).toContain(`${url} is not an endpoint of API v2`);
    expect(err.message).toContain("baseUrl: it must be the service root");
  });

  it("never takes a wrong base path for an instance or image that is already gone", async () => {
    const wrong = cloudIn().client({ baseUrl: `${cloudIn().url}/api/open` });
    await expect(wrong.instances.destroy("i-123")).rejects.toBeInstanceOf(EndpointNotFoundError);
    await expect(wrong.images.delete("img-123")).rejects.toBeInstanceOf(EndpointNotFoundError);
  });

  it("still reports the API's own missing resource as NotFoundError, and a delete of it as done", async () => {
    const client = cloudIn().client();
    await expect(client.instances.info("i-missing")).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.instances.destroy("i-missing")).resolves.toBeUndefined();
    await expect(client.images.delete("img-missing")).resolves.toBeUndefined();
  });

  it("verifies the service with one public call, and refuses a wrong base path", async () => {
    await cloudIn().clearRequests();
    await expect(cloudIn().client({ apiKey: undefined }).verifyService()).resolves.toBeUndefined();
    const log = await cloudIn().requests();
    expect(log.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /pod/list"]);
    await expect(
      cloudIn()
        .client({ baseUrl: `${cloudIn().url}/api/open` })
        .verifyService(),
    ).rejects.toBeInstanceOf(EndpointNotFoundError);
  });
});

describe("a base URL that points at something else", () => {
  let html404: ForeignServer;
  let json404: ForeignServer;
  let html200: ForeignServer;
  let notV2: ForeignServer;
  const clients: GpuCloudClient[] = [];
  const clientOf = (server: ForeignServer): GpuCloudClient => {
    const client = new GpuCloudClient({ baseUrl: server.url, apiKey: KEY, maxRetries: 0 });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    html404 = await foreignServer((_req, res) => {
      res.writeHead(404, { "content-type": "text/html" });
      res.end("<!doctype html><html><head><title>404 Not Found</title></head><body>nginx</body></html>");
    });
    json404 = await foreignServer((_req, res) => json(res, 404, { error: "Not Found", path: "/x" }));
    html200 = await foreignServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html><head><title>Sign in to the network</title></head></html>");
    });
    notV2 = await foreignServer((_req, res) => json(res, 200, { code: 0, msg: "ok", data: { items: [] } }));
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all([html404, json404, html200, notV2].map((s) => s.close()));
  });

  it.each([
    ["an HTML 404 page", () => html404, 'an HTML page ("404 Not Found")'],
    ["a JSON 404 without the envelope", () => json404, "JSON without the API's code and msg"],
  ])(
    "answering %s: reads, deletes and verifyService fail with EndpointNotFoundError",
    async (_name, server, shown) => {
      const client = clientOf(server());
      const read = await failure(client.instances.info("i-1"));
      expect(read).toBeInstanceOf(EndpointNotFoundError);
      expect(read.message).toContain(
        `${server().url}/api/open/v2/instance/info?instance_uuid=i-1 answered with ${shown}`,
      );
      await expect(client.instances.destroy("i-1")).rejects.toBeInstanceOf(EndpointNotFoundError);
      await expect(client.images.delete("img-1")).rejects.toBeInstanceOf(EndpointNotFoundError);
      await expect(client.verifyService()).rejects.toBeInstanceOf(EndpointNotFoundError);
    },
  );

  it("answering an HTML page with HTTP 200: verifyService fails with a GpuCloudError, never succeeds", async () => {
    const err = await failure(clientOf(html200).verifyService());
    expect(err).toBeInstanceOf(GpuCloudError);
    expect(err.message).toContain(
      'answered with an HTML page ("Sign in to the network"), not the {code, msg, data} envelope',
    );
  });

  it("answering JSON that is not API v2's: verifyService fails naming what does not match", async () => {
    const err = await failure(clientOf(notV2).verifyService());
    expect(err).toBeInstanceOf(GpuCloudError);
    expect(err.message).toMatch(/does not match the documented API v2 \(pod_list: .*\)/);
  });

  it("verifies once: concurrent calls share one request, later ones send none, a failure is tried again", async () => {
    const good = await foreignServer((_req, res) => json(res, 200, POD_PAGE));
    try {
      const client = clientOf(good);
      await Promise.all([client.verifyService(), client.verifyService(), client.verifyService()]);
      await client.verifyService();
      expect(good.hits).toEqual(["GET /api/open/v2/pod/list?page=1&page_size=1"]);
    } finally {
      await good.close();
    }
    const client = clientOf(html404);
    const before = html404.hits.length;
    await expect(client.verifyService()).rejects.toBeInstanceOf(EndpointNotFoundError);
    await expect(client.verifyService()).rejects.toBeInstanceOf(EndpointNotFoundError);
    expect(html404.hits.length - before).toBe(2);
  });

  it("refuses a baseUrl that already ends with /api/open/v2 before sending anything", () => {
    expect(() => new GpuCloudClient({ baseUrl: `${html404.url}/api/open/v2/` })).toThrow(
      InputValidationError,
    );
    expect(() => new GpuCloudClient({ baseUrl: `${html404.url}/api/open/v2` })).toThrow(
      /baseUrl: must be the service root without \/api\/open\/v2, which the client appends itself/,
    );
  });
});
