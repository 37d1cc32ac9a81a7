/**
 * A Retry-After the client cannot honour (an hour, years, past a call's deadline) fails at once with a
 * RateLimitError saying how long the cloud asked to wait, instead of stalling or spinning a timer.
 * A foreign server sends the Retry-After values the emulator never does; waits run against the emulator.
 */
import type { ServerResponse } from "node:http";
import { GpuCloudClient, RateLimitError, ServerError, TimeoutError } from "pulumi-gpucloud/sdk";
import { foreignServer, json, type ForeignServer } from "./foreign-server";
import { cloudFor, ERROR_MODES, failure } from "./harness";

function refuse(res: ServerResponse, retryAfter: string, headers: Record<string, string> = {}): void {
  json(
    res,
    429,
    { code: 429, msg: "too many requests", message: "too many requests" },
    { "retry-after": retryAfter, ...headers },
  );
}

describe("a Retry-After longer than the client may wait", () => {
  let server: ForeignServer;
  let retryAfter = "3600";
  let headers: Record<string, string> = {};
  const clients: GpuCloudClient[] = [];
  const client = (options: { maxRateLimitWaitMs?: number } = {}): GpuCloudClient => {
    const c = new GpuCloudClient({ baseUrl: server.url, apiKey: "sk-rate-limit-test", ...options });
    clients.push(c);
    return c;
  };
  const overflowWarnings: string[] = [];
  const onWarning = (warning: Error): void => {
    if (warning.name === "TimeoutOverflowWarning") overflowWarnings.push(warning.message);
  };

  beforeAll(async () => {
    server = await foreignServer((_req, res) => refuse(res, retryAfter, headers));
    process.on("warning", onWarning);
  });
  beforeEach(() => {
    server.hits.length = 0;
    headers = {};
  });
  afterAll(async () => {
    process.off("warning", onWarning);
    await Promise.all(clients.map((c) => c.close()));
    await server.close();
  });

  it("of an hour fails at once, saying how long and until when, after one request", async () => {
    retryAfter = "3600";
    const err = await failure(client().account.balance());
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err).toMatchObject({ retryAfterMs: 3_600_000, tooLongToWait: true, status: 429 });
    expect(err.message).toMatch(/asked to wait 60 min \(until \d{4}-\d\d-\d\dT[\d:.]+Z\)/);
    expect(err.message).toContain("longer than this call may wait (2 min, maxRateLimitWaitMs)");
    expect(server.hits).toHaveLength(1);
  });

  it("of years fails at once too, and arms no timer beyond what setTimeout can hold", async () => {
    retryAfter = "99999999999";
    const err = await failure(client().account.balance());
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err.message).toContain("asked to wait 3169 years");
    expect(server.hits).toHaveLength(1);
    expect(overflowWarnings).toEqual([]);
  });

  it("given as an HTTP date is measured on the cloud's clock, from its Date header", async () => {
    headers = { date: "Sun, 01 Jan 2040 00:00:00 GMT" };
    retryAfter = "Sun, 01 Jan 2040 01:00:00 GMT";
    const err = await failure(client().account.balance());
    expect((err as RateLimitError).retryAfterMs).toBe(3_600_000);
    expect(err.message).toContain("asked to wait 60 min");
  });

  it("longer than maxRateLimitWaitMs fails at once, naming that option", async () => {
    retryAfter = "3";
    const err = await failure(client({ maxRateLimitWaitMs: 1000 }).account.balance());
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err.message).toContain("asked to wait 3 s");
    expect(err.message).toContain("(1 s, maxRateLimitWaitMs)");
    expect(err.message).toContain("raise maxRateLimitWaitMs");
    expect(server.hits).toHaveLength(1);
  });

  it("states a limit under a second in ms, so it never reads as long as the wait it refused", async () => {
    retryAfter = "1";
    const err = await failure(client({ maxRateLimitWaitMs: 500 }).account.balance());
    expect(err.message).toContain("asked to wait 1 s");
    expect(err.message).toContain("(500 ms, maxRateLimitWaitMs)");
  });

  it("ending after the call's deadline fails at once, naming the deadline", async () => {
    retryAfter = "5";
    const err = await failure(client().account.balance({ deadline: Date.now() + 1000 }));
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err.message).toContain("asked to wait 5 s");
    // What is left of the deadline when the 429 came back: under a second, shown in ms (1 s at most).
    const left = err.message.match(/longer than this call may wait \((\d+) (m?s), its deadline\)/);
    expect(left).not.toBeNull();
    expect(Number(left![1]) * (left![2] === "s" ? 1000 : 1)).toBeLessThanOrEqual(1000);
    expect(server.hits).toHaveLength(1);
  });

  it("on a 503 fails at once too, as a ServerError saying how long the service asked to wait", async () => {
    const unavailable = await foreignServer((_req, res) =>
      json(res, 503, { code: 503, message: "maintenance" }, { "retry-after": "7200" }),
    );
    try {
      const c = new GpuCloudClient({ baseUrl: unavailable.url, apiKey: "sk-rate-limit-test" });
      clients.push(c);
      const err = await failure(c.account.balance());
      expect(err).toBeInstanceOf(ServerError);
      expect(err.message).toMatch(/It asked to wait 2 h \(until .*\), longer than this call may wait/);
      expect(unavailable.hits).toHaveLength(1);
    } finally {
      await unavailable.close();
    }
  });

  it("turns the client's next calls away without sending them while the pause lasts", async () => {
    retryAfter = "3600";
    const c = client();
    await failure(c.account.balance());
    const next = await failure(c.instances.list());
    expect(next).toBeInstanceOf(RateLimitError);
    expect(next.message).toMatch(/an earlier answer asked to wait 60 min more .*nothing was sent/);
    expect(server.hits).toHaveLength(1);
  });
});

describe.each(ERROR_MODES)("waits under rate limits (emulator, %s statuses)", (mode) => {
  const cloudIn = cloudFor({ errorStatus: mode });

  /** A new instance (status 1, starting) and the client that made it. */
  async function starting(): Promise<{ client: GpuCloudClient; instance_uuid: string }> {
    const client = cloudIn().client();
    const { instance_uuid } = await client.instances.createByPod({
      pod_uuid: (await client.catalogue.pods()).pod_list[0].uuid,
      gpu_uuid: (await client.catalogue.gpus()).gpu_list.find((g) => g.status === 1)!.gpu_uuid,
      gpu_nums: 1,
    });
    return { client, instance_uuid };
  }

  it("pass their deadline to their polls: a Retry-After past it ends the wait at once", async () => {
    const { client, instance_uuid } = await starting();
    await cloudIn().fault("/instance/info", "http_429", 1);
    const err = await failure(
      client.instances.waitForStatus(instance_uuid, [2], { timeoutMs: 400, pollIntervalMs: 50 }),
    );
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err).not.toBeInstanceOf(TimeoutError);
    expect(err.message).toMatch(/asked to wait 1 s .*its deadline/);
  });

  it("ride out a 429 that ends before their deadline", async () => {
    const { client, instance_uuid } = await starting();
    await cloudIn().advance(120);
    await cloudIn().fault("/instance/info", "http_429", 1);
    const running = await client.instances.waitForStatus(instance_uuid, [2], {
      timeoutMs: 20_000,
      pollIntervalMs: 50,
    });
    expect(running.status).toBe(2);
    const info = cloudIn().events.filter((e) => e.path === `/instance/info?instance_uuid=${instance_uuid}`);
    expect(info.map((e) => e.status)).toEqual([429, 200]);
  });
});
