/**
 * Found by the 429 storm: a burst of calls larger than the connection pool passed the pacing gate at
 * once and queued inside the pool, so after the first 429 the pool kept sending them, inside the
 * Retry-After window. Here a server refuses everything with Retry-After: 1 for a second after its first
 * 429. What was sent when is judged on the client's own log: arrival times cannot tell a request sent too
 * early from one already in flight when the first 429 was answered, and on a loaded machine a burst of
 * new connections arrives over tens of milliseconds.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { GpuCloudClient, type RequestEvent } from "pulumi-gpucloud/sdk";
import { sentInsideRetryAfter } from "./retry-window";

/** Half again the client's connection pool (32): the calls past it queue inside the pool, as in the storm. */
const CALLS = 48;

describe("Retry-After under a burst larger than the connection pool", () => {
  let server: Server;
  let url: string;
  let firstRefusal: number | undefined;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const now = Date.now();
      req.resume();
      const refusing = firstRefusal === undefined || now < firstRefusal + 1000;
      firstRefusal ??= now;
      res.setHeader("content-type", "application/json");
      if (refusing) {
        res.statusCode = 429;
        res.setHeader("retry-after", "1");
        res.end(JSON.stringify({ code: 429, msg: "too many requests", message: "too many requests" }));
      } else {
        res.end(JSON.stringify({ code: 0, msg: "success", data: { balance: 1, card_balance: 0 } }));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("sends nothing inside the Retry-After window, however many calls wait", async () => {
    const sent: RequestEvent[] = [];
    const client = new GpuCloudClient({
      baseUrl: url,
      apiKey: "k",
      maxRetries: 10,
      onRequest: (e) => sent.push(e),
    });
    try {
      const results = await Promise.allSettled(Array.from({ length: CALLS }, () => client.account.balance()));
      expect(results.filter((r) => r.status === "rejected")).toEqual([]);
    } finally {
      await client.close();
    }
    expect(sent.filter((e) => e.status === 429).length).toBeGreaterThanOrEqual(CALLS / 4);
    expect(sentInsideRetryAfter(sent)).toBe(0);
  });
});
