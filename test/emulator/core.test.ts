import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fingerprint } from "pulumi-gpucloud/emulator";
import {
  createInstance,
  DEMO_KEY,
  DEMO_USER,
  gpuUuid,
  instanceInfo,
  pod,
  startTestEmulator,
  type TestEmulator,
  HTTP_ERROR_STATUS,
} from "./helpers";

describe("emulator envelope and robustness", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator(HTTP_ERROR_STATUS);
  });
  afterAll(() => t.close());

  it("answers an unknown path with 404 in the alternative shape", async () => {
    const answer = await t.api("GET", "/no/such/thing");
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ code: 404, data: { error: "not_found" } });
    expect(answer.body.msg).toContain("/no/such/thing");
    expect(answer.body.message).toBe(answer.body.msg);
  });

  it("answers a known path with the wrong method with 405 and an Allow header", async () => {
    const answer = await t.api("DELETE", "/instance/list");
    expect(answer.status).toBe(405);
    expect(answer.body).toMatchObject({ code: 405, data: { error: "method_not_allowed" } });
    expect(answer.headers.get("allow")).toBe("GET");
  });

  it("refuses malformed JSON with 400 code 1 naming the body", async () => {
    const answer = await t.api("POST", "/instance/create_by_pod", { rawBody: "{not json" });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ code: 1, msg: "body: is not valid JSON" });
  });

  it("refuses a body that is not JSON with 400 code 1", async () => {
    const answer = await t.api("POST", "/instance/destroy", {
      rawBody: "instance_uuid=x",
      headers: { "content-type": "text/plain" },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe(1);
    expect(answer.body.msg).toMatch(/^body: /);
  });

  it("refuses a field of the wrong type with '<field>: <rule>'", async () => {
    const answer = await t.api("POST", "/instance/create_by_pod", {
      body: { pod_uuid: 7, gpu_uuid: "g", gpu_nums: 1 },
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ code: 1, msg: "pod_uuid: must be a string" });
  });

  it("names a missing required field", async () => {
    const answer = await t.api("POST", "/instance/destroy", { body: {} });
    expect(answer.body).toEqual({ code: 1, msg: "instance_uuid: is required" });
  });

  it("refuses a body over the limit with 413 in the alternative shape", async () => {
    const answer = await t.api("POST", "/instance/destroy", {
      body: { instance_uuid: "x".repeat(2 * 1024 * 1024) },
    });
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ code: 413, data: { error: "payload_too_large" } });
  });

  it("answers success with code 0 and msg success", async () => {
    const answer = await t.api("GET", "/gpu/list");
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ code: 0, msg: "success" });
  });
});

describe("emulator authentication", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({
      ...HTTP_ERROR_STATUS,
      apiKeys: ["alice:alice-key-1", "alice:alice-key-2", "bob:bob-key", "solo-key"],
    });
  });
  afterAll(() => t.close());

  it("answers a protected call without a header with 401 code 2 'not logged in'", async () => {
    const answer = await t.api("GET", "/instance/list", { key: null });
    expect(answer.status).toBe(401);
    expect(answer.body.code).toBe(2);
    expect(answer.body.msg).toMatch(/^not logged in: /);
  });

  it("answers a malformed header with 401 code 2 'authentication failed'", async () => {
    const answer = await t.api("GET", "/instance/list", {
      key: null,
      headers: { authorization: "Token abc" },
    });
    expect(answer.status).toBe(401);
    expect(answer.body.code).toBe(2);
    expect(answer.body.msg).toMatch(/^authentication failed: /);
  });

  it("answers an unknown key with 401 and never echoes it", async () => {
    const answer = await t.api("GET", "/instance/list", { key: "secret-guess-123" });
    expect(answer.status).toBe(401);
    expect(answer.body.msg).toMatch(/^authentication failed: /);
    expect(JSON.stringify(answer.body)).not.toContain("secret-guess-123");
  });

  it("lets keys of the same user see the same instances and hides them from other users", async () => {
    const created = await createInstance(t, { key: "alice-key-1" });
    expect((await instanceInfo(t, created.instance_uuid, "alice-key-2")).body.code).toBe(0);
    const fromBob = await instanceInfo(t, created.instance_uuid, "bob-key");
    expect(fromBob.status).toBe(404);
    expect(fromBob.body.code).toBe(-1);
    const fromSolo = await instanceInfo(t, created.instance_uuid, "solo-key");
    expect(fromSolo.status).toBe(404);
  });

  it("rejects a key disabled through the admin API while its sibling keeps working", async () => {
    expect((await t.admin("POST", "/keys/alice-key-2/disable")).status).toBe(200);
    const answer = await t.api("GET", "/instance/list", { key: "alice-key-2" });
    expect(answer.status).toBe(401);
    expect(answer.body.msg).toContain("disabled");
    expect((await t.api("GET", "/instance/list", { key: "alice-key-1" })).status).toBe(200);
  });

  it("serves the public catalogues without a key", async () => {
    expect((await t.api("GET", "/pod/list", { key: null })).status).toBe(200);
    expect((await t.api("GET", "/image/market/list", { key: null })).status).toBe(200);
    expect((await t.api("GET", "/gpu/list", { key: null })).status).toBe(401);
  });

  it("starts with one key demo-key when none is given", async () => {
    const other = await startTestEmulator(HTTP_ERROR_STATUS);
    try {
      expect((await other.api("GET", "/balance/info", { key: DEMO_KEY })).body.data.balance).toBe(1000);
    } finally {
      await other.close();
    }
  });
});

describe("emulator rate limiting", () => {
  it("answers the request over the per-key limit with 429 and Retry-After", async () => {
    const t = await startTestEmulator({ ...HTTP_ERROR_STATUS, rateLimit: 2 });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i += 1) statuses.push(await t.api("GET", "/instance/list"));
      expect(statuses.map((a) => a.status)).toEqual([200, 200, 429]);
      const limited = statuses[2];
      expect(limited.body).toMatchObject({ code: 429, data: { error: "rate_limited" } });
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(Number.isInteger(Number(limited.headers.get("retry-after")))).toBe(true);
      expect((await t.api("GET", "/pod/list", { key: null })).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it("counts each key on its own", async () => {
    const t = await startTestEmulator({ ...HTTP_ERROR_STATUS, rateLimit: 1, apiKeys: ["a-key", "b-key"] });
    try {
      expect((await t.api("GET", "/instance/list", { key: "a-key" })).status).toBe(200);
      expect((await t.api("GET", "/instance/list", { key: "b-key" })).status).toBe(200);
      expect((await t.api("GET", "/instance/list", { key: "a-key" })).status).toBe(429);
    } finally {
      await t.close();
    }
  });
});

describe("emulator fault injection", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator(HTTP_ERROR_STATUS);
  });
  afterAll(() => t.close());
  beforeEach(() => t.admin("POST", "/reset"));

  const fault = (kind: string, extra: Record<string, unknown> = {}) =>
    t.admin("POST", "/faults", { path: "/instance/list", kind, count: 1, ...extra });

  it("http_500 answers 500 code -2 once, then the call works again", async () => {
    await fault("http_500");
    const failed = await t.api("GET", "/instance/list");
    expect(failed.status).toBe(500);
    expect(failed.body).toEqual({ code: -2, msg: "system error" });
    expect((await t.api("GET", "/instance/list")).status).toBe(200);
  });

  it("http_503 answers 503 in the alternative shape", async () => {
    await fault("http_503");
    const failed = await t.api("GET", "/instance/list");
    expect(failed.status).toBe(503);
    expect(failed.body.code).toBe(503);
  });

  it("http_429 answers 429 with Retry-After: 1", async () => {
    await fault("http_429");
    const failed = await t.api("GET", "/instance/list");
    expect(failed.status).toBe(429);
    expect(failed.headers.get("retry-after")).toBe("1");
  });

  it("honours count: the next N calls fail", async () => {
    await fault("http_500", { count: 2 });
    expect((await t.api("GET", "/instance/list")).status).toBe(500);
    expect((await t.api("GET", "/instance/list")).status).toBe(500);
    expect((await t.api("GET", "/instance/list")).status).toBe(200);
  });

  it("reset drops the connection before any work is done", async () => {
    await t.admin("POST", "/faults", { path: "/instance/create_by_pod", kind: "reset", count: 1 });
    await expect(createInstance(t)).rejects.toThrow();
    expect((await t.api("GET", "/instance/list")).body.data.total).toBe(0);
  });

  it("drop_after_commit does the work, then drops the connection without an answer", async () => {
    await t.admin("POST", "/faults", {
      path: "/instance/create_by_pod",
      kind: "drop_after_commit",
      count: 1,
    });
    await expect(createInstance(t)).rejects.toThrow();
    expect((await t.api("GET", "/instance/list")).body.data.total).toBe(1);
  });

  it("http_500_after_commit does the work, then answers a system error", async () => {
    await t.admin("POST", "/faults", { path: "/instance/create_by_pod", kind: "http_500_after_commit" });
    const answer = await t.api("POST", "/instance/create_by_pod", {
      body: { pod_uuid: (await pod(t, "ComfyUI")).uuid, gpu_uuid: await gpuUuid(t, "4090D"), gpu_nums: 1 },
    });
    expect(answer).toMatchObject({ status: 500, body: { code: -2, msg: "system error" } });
    expect((await t.api("GET", "/instance/list")).body.data.total).toBe(1);
  });

  it("delay holds the answer for the given milliseconds", async () => {
    await fault("delay", { ms: 300 });
    const started = Date.now();
    expect((await t.api("GET", "/instance/list")).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
  });

  it("late_commit holds the request, then carries it out though the client is gone", async () => {
    await t.admin("POST", "/faults", { path: "/instance/create_by_pod", kind: "late_commit", ms: 300 });
    const body = JSON.stringify({
      pod_uuid: (await pod(t, "ComfyUI")).uuid,
      gpu_uuid: await gpuUuid(t, "4090D"),
      gpu_nums: 1,
    });
    // The client sends the whole request and gives up at once, as one whose timeout expired.
    await new Promise<void>((resolve, reject) => {
      const socket = connect({ host: "127.0.0.1", port: t.running.port }, () => {
        socket.end(
          `POST /api/open/v2/instance/create_by_pod HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${DEMO_KEY}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
          () => {
            socket.destroy();
            resolve();
          },
        );
      });
      socket.once("error", reject);
    });
    let total = 0;
    for (let tries = 0; total === 0 && tries < 200; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      total = (await t.api("GET", "/instance/list")).body.data.total;
    }
    expect(total).toBe(1);
  });

  it("late_commit answers a client that waits, after the hold", async () => {
    await t.admin("POST", "/faults", { path: "/instance/list", kind: "late_commit", ms: 300 });
    const started = Date.now();
    expect((await t.api("GET", "/instance/list")).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
  });

  it("refuses late_commit without ms, ms on a kind that does not hold, and count with probability", async () => {
    const refused = async (fault: Record<string, unknown>) =>
      (await t.admin("POST", "/faults", { path: "/instance/list", ...fault })).body.msg;
    expect(await refused({ kind: "late_commit" })).toMatch(/^ms: is required for late_commit/);
    expect(await refused({ kind: "http_500", ms: 5 })).toBe("ms: only applies to delay and late_commit");
    expect(await refused({ kind: "http_500", count: 2, probability: 0.5 })).toBe(
      "probability: give either count or probability, not both",
    );
    expect(await refused({ kind: "http_500", seed: 1 })).toBe("seed: only applies with probability");
    expect(await refused({ kind: "http_500", probability: 1.5 })).toBe("probability: must be at most 1");
  });

  it("fails each call with a probability, repeatably with a seed, and lists how the fault fared", async () => {
    const statuses = async () => {
      await t.admin("DELETE", "/faults");
      await t.admin("POST", "/faults", {
        path: "/instance/list",
        kind: "http_500",
        probability: 0.5,
        seed: 42,
      });
      const seen: number[] = [];
      for (let i = 0; i < 40; i += 1) seen.push((await t.api("GET", "/instance/list")).status);
      return seen;
    };
    const first = await statuses();
    const failed = first.filter((s) => s === 500).length;
    expect(failed).toBeGreaterThan(5);
    expect(failed).toBeLessThan(35);
    expect(first.filter((s) => s !== 500).every((s) => s === 200)).toBe(true);
    expect((await t.admin("GET", "/faults")).body.faults).toEqual([
      { path: "/instance/list", kind: "http_500", probability: 0.5, seed: 42, calls: 40, fired: failed },
    ]);
    expect(await statuses()).toEqual(first);
  });

  it("drops one pending fault by its place in the list (the console's clear button)", () => {
    const table = t.running.emulator.faults;
    table.add({ path: "/a", kind: "http_500", count: 2 });
    table.add({ path: "/b", kind: "http_503", probability: 0.5 });
    expect(table.remove(0)).toBe(true);
    expect(table.list().map((f) => f.path)).toEqual(["/b"]);
    expect(table.remove(1)).toBe(false);
    expect(table.remove(-1)).toBe(false);
    table.clear();
  });

  it("fails every call with probability 1 and none with 0, until the fault is cleared", async () => {
    await t.admin("POST", "/faults", { path: "/instance/list", kind: "http_503", probability: 1 });
    await t.admin("POST", "/faults", { path: "/gpu/list", kind: "http_503", probability: 0 });
    for (let i = 0; i < 5; i += 1) {
      expect((await t.api("GET", "/instance/list")).status).toBe(503);
      expect((await t.api("GET", "/gpu/list")).status).toBe(200);
    }
    await t.admin("DELETE", "/faults");
    expect((await t.api("GET", "/instance/list")).status).toBe(200);
  });

  it("refuses an unknown fault kind with 400 code 1", async () => {
    const answer = await t.admin("POST", "/faults", { path: "/instance/list", kind: "explode", count: 1 });
    expect(answer.status).toBe(400);
    expect(answer.body.msg).toMatch(/^kind: /);
  });
});

describe("emulator request log", () => {
  it("records method, path, fingerprinted key, status and time, and can be cleared", async () => {
    const t = await startTestEmulator(HTTP_ERROR_STATUS);
    try {
      await t.api("GET", "/instance/list", { query: { page: 1 } });
      await t.api("GET", "/instance/list", { key: "wrong-key" });
      const log = await t.admin("GET", "/requests");
      const requests = log.body.requests as {
        method: string;
        path: string;
        key: string;
        status: number;
        time: number;
      }[];
      expect(requests).toEqual([
        {
          method: "GET",
          path: "/instance/list",
          key: fingerprint(DEMO_KEY),
          status: 200,
          time: await t.now(),
        },
        {
          method: "GET",
          path: "/instance/list",
          key: fingerprint("wrong-key"),
          status: 401,
          time: await t.now(),
        },
      ]);
      expect(JSON.stringify(log.body)).not.toContain(DEMO_KEY);
      await t.admin("DELETE", "/requests");
      expect((await t.admin("GET", "/requests")).body.requests).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

describe("emulator admin API", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ ...HTTP_ERROR_STATUS, startTime: 1_800_000_000 });
  });
  afterAll(() => t.close());

  it("reports the simulated clock and moves it on advance", async () => {
    expect(await t.now()).toBe(1_800_000_000);
    expect(await t.advance(90)).toBe(1_800_000_090);
    expect((await t.admin("GET", "/clock")).body).toEqual({ now: 1_800_000_090 });
  });

  it("refuses a negative advance", async () => {
    const answer = await t.admin("POST", "/clock/advance", { seconds: -5 });
    expect(answer.status).toBe(400);
    expect(answer.body.msg).toMatch(/^seconds: /);
  });

  it("sets a user's balance exactly", async () => {
    await t.admin("PUT", `/users/${DEMO_USER}/balance`, { balance: "12.34567891" });
    expect((await t.api("GET", "/balance/info")).body.data).toEqual({
      balance: 12.34567891,
      card_balance: 0,
    });
  });

  it("answers 404 for the balance of an unknown user", async () => {
    expect((await t.admin("PUT", "/users/nobody/balance", { balance: 5 })).status).toBe(404);
  });

  it("resets everything to the seed, balances and keys included", async () => {
    await createInstance(t);
    await t.admin("PUT", `/users/${DEMO_USER}/balance`, { balance: 3 });
    await t.admin("POST", `/keys/${DEMO_KEY}/disable`);
    await t.admin("POST", "/reset");
    expect((await t.api("GET", "/balance/info")).body.data.balance).toBe(1000);
    expect((await t.api("GET", "/instance/list")).body.data.total).toBe(0);
  });

  it("dumps state without keys or SSH passwords", async () => {
    await createInstance(t);
    await t.advance(60);
    const state = await t.admin("GET", "/state");
    const text = JSON.stringify(state.body);
    expect(text).not.toContain(DEMO_KEY);
    expect(text).toContain("<redacted>");
    expect(state.body.keys).toEqual([
      { fingerprint: fingerprint(DEMO_KEY), user: DEMO_USER, disabled: false },
    ]);
  });
});

describe("emulator persistence", () => {
  it("keeps instances, balances and the clock across a restart on the same state file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gpucloud-emu-"));
    const stateFile = join(dir, "state.json");
    try {
      const first = await startTestEmulator({ ...HTTP_ERROR_STATUS, stateFile });
      const created = await createInstance(first);
      await first.api("POST", "/instance/update_title", {
        body: { instance_uuid: created.instance_uuid, title: "kept" },
      });
      await first.advance(120);
      const balance = (await first.api("GET", "/balance/info")).body.data.balance;
      await first.close();
      expect(readFileSync(stateFile, "utf8")).toContain(created.instance_uuid);

      const second = await startTestEmulator({ ...HTTP_ERROR_STATUS, stateFile });
      try {
        const info = await instanceInfo(second, created.instance_uuid);
        expect(info.body.data).toMatchObject({ title: "kept", status: 2 });
        expect((await second.api("GET", "/balance/info")).body.data.balance).toBe(balance);
        expect(await second.now()).toBe(info.body.data.create_time + 120);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("has saved a change before answering it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gpucloud-emu-"));
    const stateFile = join(dir, "state.json");
    try {
      const t = await startTestEmulator({ ...HTTP_ERROR_STATUS, stateFile });
      try {
        const created = await createInstance(t);
        expect(readFileSync(stateFile, "utf8")).toContain(created.instance_uuid);
      } finally {
        await t.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("emulator real-time clock", () => {
  it("moves simulated time at timeScale simulated seconds per real second", async () => {
    const t = await startTestEmulator({ ...HTTP_ERROR_STATUS, timeScale: 1000 });
    try {
      const created = await createInstance(t);
      const deadline = Date.now() + 5000;
      let status = created.status;
      while (status !== 2 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        status = (await instanceInfo(t, created.instance_uuid)).body.data.status;
      }
      expect(status).toBe(2);
    } finally {
      await t.close();
    }
  });

  it("keeps a frozen clock (timeScale 0) still between advances", async () => {
    const t = await startTestEmulator(HTTP_ERROR_STATUS);
    try {
      const before = await t.now();
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect(await t.now()).toBe(before);
    } finally {
      await t.close();
    }
  });
});
