/** client.cloudNow(): the cloud's time from the latest answer's Date header plus local time since. */
import { GpuCloudClient } from "pulumi-gpucloud/sdk";
import { foreignServer, json, POD_PAGE, type ForeignServer } from "./foreign-server";
import { admin, startCloud } from "./harness";

describe("the cloud's clock, from a service that sends a chosen Date", () => {
  let server: ForeignServer;
  let date = "";
  let client: GpuCloudClient;
  beforeAll(async () => {
    server = await foreignServer((req, res) => {
      res.sendDate = false;
      const headers: Record<string, string> = date ? { date } : {};
      if (req.url?.startsWith("/api/open/v2/pod/list")) json(res, 200, POD_PAGE, headers);
      else json(res, 404, { code: -1, msg: "instance not found" }, headers);
    });
  });
  beforeEach(() => {
    client = new GpuCloudClient({ baseUrl: server.url, maxRetries: 0 });
  });
  afterEach(() => client.close());
  afterAll(() => server.close());

  /** cloudNow() right after one call: the Date it saw, plus at most the local time the call took. */
  async function readAfter(call: () => Promise<unknown>): Promise<{ cloud: number; elapsed: number }> {
    const started = Date.now();
    await call().catch(() => undefined);
    const cloud = client.cloudNow();
    if (cloud === undefined) throw new Error("no cloud time after an answer");
    return { cloud, elapsed: Date.now() - started };
  }

  it("is undefined before any answer arrived", () => {
    expect(client.cloudNow()).toBeUndefined();
  });

  it("is the answer's Date plus the local time elapsed since", async () => {
    date = "Wed, 01 Jan 2031 00:00:00 GMT";
    const { cloud, elapsed } = await readAfter(() => client.verifyService());
    const sent = Date.parse(date);
    expect(cloud).toBeGreaterThanOrEqual(sent);
    expect(cloud - sent).toBeLessThanOrEqual(elapsed + 2);
  });

  it("follows the latest answer, error answers included", async () => {
    date = "Wed, 01 Jan 2031 00:00:00 GMT";
    await client.verifyService();
    date = "Thu, 01 Jan 2032 12:00:00 GMT";
    const { cloud, elapsed } = await readAfter(() => client.instances.info("i-1"));
    expect(cloud - Date.parse(date)).toBeGreaterThanOrEqual(0);
    expect(cloud - Date.parse(date)).toBeLessThanOrEqual(elapsed + 2);
  });

  it("ignores an answer without a readable Date, keeping the last one it could read", async () => {
    date = "Wed, 01 Jan 2031 00:00:00 GMT";
    await client.verifyService();
    date = "";
    await client.instances.info("i-1").catch(() => undefined);
    date = "not a date";
    const { cloud } = await readAfter(() => client.instances.info("i-1"));
    expect(Math.abs(cloud - Date.parse("Wed, 01 Jan 2031 00:00:00 GMT"))).toBeLessThan(60_000);
  });
});

// Passes once the emulator sends its simulated time in the Date header (CONTRACTS: "Every HTTP answer
// carries the simulated time in the Date header"), which the emulator's own work brings.
describe("the cloud's clock, from the emulator", () => {
  it("follows the emulator's simulated time, not the local clock", async () => {
    const cloud = await startCloud();
    try {
      const client = cloud.client();
      await cloud.advance(10 * 86_400);
      const simulated = await client.catalogue.gpus().then(() => client.cloudNow());
      const { now } = (await admin(cloud.url, "GET", "/_emulator/clock")) as { now: number };
      expect(simulated).toBeDefined();
      expect(Math.abs(simulated! - now * 1000)).toBeLessThan(5000);
      expect(simulated! - Date.now()).toBeGreaterThan(9 * 86_400_000);
    } finally {
      await cloud.close();
    }
  });
});
