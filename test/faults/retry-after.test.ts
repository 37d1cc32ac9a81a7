/**
 * Found by the 429 storm: a burst of calls larger than the connection pool passed the pacing gate at
 * once and queued inside the pool, so after the first 429 the pool kept sending them, inside the
 * Retry-After window. Here a server refuses everything with Retry-After: 1 for a second after its first
 * 429 and records when each request arrives.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { GpuCloudClient } from "pulumi-gpucloud/sdk";

const CALLS = 100;
/** Requests on the wire when the first 429 leaves arrive just after it; they could not know. */
const IN_FLIGHT_GRACE_MS = 50;

describe("Retry-After under a burst larger than the connection pool", () => {
  let server: Server;
  let url: string;
  const arrivals: number[] = [];
  let firstRefusal: number | undefined;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const now = Date.now();
      arrivals.push(now);
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
    const client = new GpuCloudClient({ baseUrl: url, apiKey: "k", maxRetries: 10 });
    try {
      const results = await Promise.allSettled(Array.from({ length: CALLS }, () => client.account.balance()));
      expect(results.filter((r) => r.status === "rejected")).toEqual([]);
    } finally {
      await client.close();
    }
    const early = arrivals.filter((t) => t > firstRefusal! + IN_FLIGHT_GRACE_MS && t < firstRefusal! + 1000);
    expect(early).toEqual([]);
  });
});
