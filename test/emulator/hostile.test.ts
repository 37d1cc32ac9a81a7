import { connect, type Socket } from "node:net";
import { RateLimiter } from "../../emulator/core/http/ratelimit";
import {
  createInstance,
  DEMO_KEY,
  gpuUuid,
  pod,
  startTestEmulator,
  type TestEmulator,
  untilClosed,
  HTTP_ERROR_STATUS,
} from "./helpers";

/** Opens a raw connection and resolves once it is connected. */
function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port }, () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Resolves once the server holds `count` connections (they are counted as it accepts or closes them). */
async function connectionsReach(t: TestEmulator, count: number): Promise<void> {
  const server = t.running.emulator.app.server;
  const current = () =>
    new Promise<number>((resolve, reject) =>
      server.getConnections((error, n) => (error ? reject(error) : resolve(n))),
    );
  while ((await current()) !== count) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe("input used as a lookup key", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ ...HTTP_ERROR_STATUS, balance: 100_000 });
  });
  afterAll(() => t.close());

  it.each(["constructor", "toString", "__proto__", "hasOwnProperty"])(
    "refuses a model-run resolution named %s with 400 naming inputs.resolution",
    async (resolution) => {
      const answer = await t.api("POST", "/model-runs/videos", {
        body: {
          idempotency_key: `res-${resolution}`,
          inputs: { model: "demo-video", prompt: "p", resolution },
        },
      });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({
        code: 1,
        msg: expect.stringMatching(/^inputs\.resolution: must be one of /),
      });
    },
  );

  it.each(["a.__proto__", "a.constructor", "a.toString"])(
    "gives an upload named %s a plain MIME type, not one found on Object.prototype",
    async (name) => {
      const form = new FormData();
      form.append("file", new Blob([Buffer.from("bytes")]), name);
      const res = await fetch(`${t.apiBase}/assets`, {
        method: "POST",
        headers: { authorization: `Bearer ${DEMO_KEY}` },
        body: form,
      });
      const body = (await res.json()) as { code: number; data: { mime_type: unknown; media_type: unknown } };
      expect(body.code).toBe(0);
      expect(body.data.mime_type).toBe("application/octet-stream");
      expect(body.data.media_type).toBe("file");
    },
  );

  it("refuses a workflow input named after an Object.prototype member as an unknown input", async () => {
    const answer = await t.api("POST", "/workflow/run/submit", {
      body: {
        workflow_id: "wf_portrait_studio",
        idempotency_key: "proto-input",
        inputs: { prompt: "p", reference_image: "https://example.com/a.png", constructor: "x" },
      },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.msg).toBe("unknown input constructor");
  });

  it("finds no user or key named after an Object.prototype member, and decodes a key once", async () => {
    for (const name of ["constructor", "__proto__", "toString"]) {
      expect((await t.admin("PUT", `/users/${name}/balance`, { balance: 1 })).status).toBe(404);
      expect((await t.admin("POST", `/keys/${name}/disable`)).status).toBe(404);
    }
    expect((await t.admin("POST", "/keys/a%25zz/disable")).status).toBe(404);
  });

  it("answers a JSON body that sets __proto__ with 400 naming the body", async () => {
    const answer = await t.api("POST", "/instance/destroy", {
      rawBody: '{"__proto__": {"x": 1}, "instance_uuid": "i"}',
    });
    expect(answer.status).toBe(400);
    expect(answer.body.msg).toMatch(/^body: /);
  });
});

describe("idempotency keys built from crafted ids", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ ...HTTP_ERROR_STATUS, balance: 100_000 });
  });
  afterAll(() => t.close());

  const submit = (workflow_id: string, idempotency_key: string) =>
    t.api("POST", "/workflow/run/submit", {
      body: {
        workflow_id,
        idempotency_key,
        inputs: { prompt: "p", reference_image: "https://example.com/a.png" },
      },
    });

  it("does not replay one workflow's run for a workflow id with a newline that does not exist", async () => {
    const first = await submit("wf_portrait_studio", "k\nz");
    expect(first.body.data.idempotent_replay).toBe(false);
    const crafted = await submit("wf_portrait_studio\nk", "z");
    expect(crafted.status).toBe(404);
    expect(crafted.body.code).toBe(-1);
    expect((await t.api("GET", "/workflow/run/list")).body.data.total).toBe(1);
  });

  it("keeps runs apart whose ids would join to the same text", async () => {
    const a = await submit("wf_portrait_studio", "x\ny");
    const b = await submit("wf_portrait_studio", "x");
    expect(b.body.data.run_order_id).not.toBe(a.body.data.run_order_id);
    expect((await submit("wf_portrait_studio", "x\ny")).body.data).toMatchObject({
      run_order_id: a.body.data.run_order_id,
      idempotent_replay: true,
    });
  });

  it("keeps model runs apart whose idempotency keys differ only by a separator", async () => {
    const run = (idempotency_key: string) =>
      t.api("POST", "/model-runs/videos", {
        body: { idempotency_key, inputs: { model: "demo-video", prompt: "p" } },
      });
    const a = await run("a\nb");
    const b = await run("a");
    expect(b.body.data.run_id).not.toBe(a.body.data.run_id);
    expect(b.body.data.idempotent_replay).toBe(false);
  });
});

describe("connections, slow requests and the rate limiter", () => {
  it("cuts off a request whose body does not arrive within the request timeout, and creates nothing", async () => {
    const t = await startTestEmulator({ ...HTTP_ERROR_STATUS, requestTimeoutMs: 300 });
    try {
      const socket = await open(t.running.port);
      const closed = untilClosed(socket);
      const body = JSON.stringify({ pod_uuid: "p", gpu_uuid: "g", gpu_nums: 1 });
      socket.write(
        `POST /api/open/v2/instance/create_by_pod HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${DEMO_KEY}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
      );
      const answer = await closed;
      expect(answer === "" || answer.startsWith("HTTP/1.1 408")).toBe(true);
      expect((await t.api("GET", "/instance/list")).body.data.total).toBe(0);
    } finally {
      await t.close();
    }
  });

  it("closes connections beyond maxConnections as they arrive and serves again once others close", async () => {
    const t = await startTestEmulator({ ...HTTP_ERROR_STATUS, maxConnections: 3 });
    const held: Socket[] = [];
    try {
      for (let i = 0; i < 3; i += 1) held.push(await open(t.running.port));
      await connectionsReach(t, 3);
      const extra = await open(t.running.port);
      expect(await untilClosed(extra)).toBe("");
      for (const socket of held.splice(0)) socket.destroy();
      await connectionsReach(t, 0);
      expect((await t.api("GET", "/gpu/list", { headers: { connection: "close" } })).status).toBe(200);
    } finally {
      for (const socket of held) socket.destroy();
      await t.close();
    }
  });

  it("tells clients it keeps an idle connection 65 s, well past a stalled client's next request", async () => {
    // A client closes its idle connection by this header (undici a little earlier). With Node's 5 s, a
    // test process stalled 6 s sent its next request as the emulator closed the connection: ECONNRESET.
    const t = await startTestEmulator();
    try {
      const answer = await t.api("GET", "/gpu/list");
      expect(answer.headers.get("connection")).toBe("keep-alive");
      expect(answer.headers.get("keep-alive")).toBe("timeout=65");
    } finally {
      await t.close();
    }
  });

  it("limits requests with rotating made-up keys by the client's address", async () => {
    const t = await startTestEmulator({ ...HTTP_ERROR_STATUS, rateLimit: 3 });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i += 1)
        statuses.push((await t.api("GET", "/instance/list", { key: `bogus-${i}` })).status);
      expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
      expect(t.running.emulator.limiter.size()).toBe(1);
      expect((await t.api("GET", "/instance/list")).status).toBe(200);
      expect(t.running.emulator.limiter.size()).toBe(2);
    } finally {
      await t.close();
    }
  });

  it("remembers callers only for a second and never more than its bound", () => {
    const limiter = new RateLimiter(2, 100);
    for (let i = 0; i < 1000; i += 1) limiter.check(`ip:10.0.${Math.floor(i / 256)}.${i % 256}`, 1_000);
    expect(limiter.size()).toBe(100);
    limiter.check("key_a", 2_500);
    expect(limiter.size()).toBe(1);
    limiter.check("key_a", 2_600);
    expect(() => limiter.check("key_a", 2_700)).toThrow(expect.objectContaining({ status: 429 }));
    expect(() => limiter.check("key_a", 3_501)).not.toThrow();
  });
});

describe("trailing slashes", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator(HTTP_ERROR_STATUS);
  });
  afterAll(() => t.close());

  it("serves a path with a trailing slash as the same resource, API and admin alike", async () => {
    const plain = await t.api("GET", "/instance/list");
    const slashed = await t.api("GET", "/instance/list/");
    expect(slashed.status).toBe(200);
    expect(slashed.body).toEqual(plain.body);
    expect((await t.admin("GET", "/clock/")).body).toEqual({ now: await t.now() });
    const created = await t.api("POST", "/instance/create_by_pod/", {
      body: { pod_uuid: (await pod(t, "ComfyUI")).uuid, gpu_uuid: await gpuUuid(t, "4090D"), gpu_nums: 1 },
    });
    expect(created.body.code).toBe(0);
  });

  it("answers a wrong method with a trailing slash like without it, and an unknown path with 404", async () => {
    const answer = await t.api("DELETE", "/instance/list/");
    expect(answer.status).toBe(405);
    expect(answer.headers.get("allow")).toBe("GET");
    expect((await t.api("GET", "/instance/nothing/")).status).toBe(404);
  });

  it("applies faults and logs calls by the path without its slash", async () => {
    await t.admin("DELETE", "/requests");
    await t.admin("POST", "/faults", { path: "/instance/list", kind: "http_503", count: 1 });
    expect((await t.api("GET", "/instance/list/")).status).toBe(503);
    const { requests } = (await t.admin("GET", "/requests")).body as unknown as {
      requests: { path: string }[];
    };
    expect(requests.map((r) => r.path)).toEqual(["/instance/list"]);
  });

  it("still creates instances the ordinary way", async () => {
    expect((await createInstance(t)).status).toBe(1);
  });
});
