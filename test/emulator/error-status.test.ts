/**
 * The error modes (EmulatorOptions.errorStatus, `--error-status`): envelope, the default, answers
 * business failures with HTTP 200 and the envelope code, as the live service does; http with 400/404.
 * The key, rate limits, the service's own failures and transport-level answers keep their HTTP status
 * in both, and so does the admin API.
 */
import { startEmulator } from "pulumi-gpucloud/emulator";
import { startTestEmulator, type TestEmulator } from "./helpers";

describe.each([
  ["http", 400, 404],
  ["envelope", 200, 200],
  [undefined, 200, 200],
] as const)("errorStatus %s (undefined: the default)", (mode, refusedStatus, missingStatus) => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ errorStatus: mode, rateLimit: 50 });
  });
  afterAll(() => t.close());

  it(`answers a parameter error with HTTP ${refusedStatus} and code 1`, async () => {
    const answer = await t.api("POST", "/instance/set_idle_close", {
      body: { instance_uuid: "i-1", idle_period_minutes: 15 },
    });
    expect([answer.status, answer.body.code]).toEqual([refusedStatus, 1]);
    expect(answer.body.msg).toContain("idle_period_minutes");
  });

  it(`answers a missing resource with HTTP ${missingStatus} and code -1`, async () => {
    const answer = await t.api("GET", "/instance/info", { query: { instance_uuid: "i-missing" } });
    expect([answer.status, answer.body.code]).toEqual([missingStatus, -1]);
    expect(answer.body.msg).toContain("not found");
  });

  it("keeps HTTP 401 for a wrong key, 404 for an unknown path and 413 for a body too large", async () => {
    const wrongKey = await t.api("GET", "/balance/info", { key: "nope" });
    expect([wrongKey.status, wrongKey.body.code]).toEqual([401, 2]);
    const unknown = await t.api("GET", "/no/such/path");
    expect([unknown.status, unknown.body.code]).toEqual([404, 404]);
    const large = await t.api("POST", "/instance/update_title", {
      rawBody: JSON.stringify({ t: "x".repeat(2 << 20) }),
    });
    expect(large.status).toBe(413);
  });

  it("keeps HTTP 5xx for the service's own failures and 429 with Retry-After for rate limits", async () => {
    await t.admin("POST", "/faults", { path: "/gpu/list", kind: "http_500", count: 1 });
    expect((await t.api("GET", "/gpu/list")).status).toBe(500);
    await t.admin("POST", "/faults", { path: "/gpu/list", kind: "http_429", count: 1 });
    const limited = await t.api("GET", "/gpu/list");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");
  });

  it("keeps the admin API's own HTTP statuses", async () => {
    expect((await t.admin("POST", "/keys/no-such-key/disable")).status).toBe(404);
  });
});

describe("the errorStatus option", () => {
  it("refuses a mode it does not know, naming the allowed ones", async () => {
    await expect(startEmulator({ port: 0, errorStatus: "quiet" as never })).rejects.toThrow(
      'errorStatus: must be one of envelope, http, got "quiet"',
    );
  });
});
