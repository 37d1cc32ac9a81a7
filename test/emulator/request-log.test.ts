/**
 * The request log covers every API call, whatever became of it: answered, refused by validation, the
 * key, the method or the rate limiter, failed by a fault, dropped without an answer, or too large to
 * read. Tests and the bench count calls through it, so a call it misses is a call they cannot see. The
 * admin API, the console and instances' services are not API calls and stay out of it.
 */
import { fingerprint } from "pulumi-gpucloud/emulator";
import { DEMO_KEY, startTestEmulator, type TestEmulator, HTTP_ERROR_STATUS } from "./helpers";

interface Logged {
  method: string;
  path: string;
  key: string | null;
  status: number | null;
}

/** One call of each kind, and how the log must show it. */
interface Case {
  what: string;
  send: (t: TestEmulator) => Promise<unknown>;
  logged: Logged;
}

const demo = fingerprint(DEMO_KEY);
const ok = (method: string, path: string, status: number | null, key: string | null = demo): Logged => ({
  method,
  path,
  key,
  status,
});

/** A raw request whose connection the emulator may drop: resolves either way. */
async function fetchThroughDrop(url: string, init?: RequestInit): Promise<void> {
  await fetch(url, init).then(
    (answer) => answer.arrayBuffer(),
    () => undefined,
  );
}

const CASES: Case[] = [
  {
    what: "an answered call",
    send: (t) => t.api("GET", "/gpu/list"),
    logged: ok("GET", "/gpu/list", 200),
  },
  {
    what: "its query string left out",
    send: (t) => t.api("GET", "/instance/list", { query: { page: 1, page_size: 5 } }),
    logged: ok("GET", "/instance/list", 200),
  },
  {
    what: "a trailing slash, logged as the same path",
    send: (t) => t.api("GET", "/instance/list/"),
    logged: ok("GET", "/instance/list", 200),
  },
  {
    what: "the API base itself, as the path /",
    send: (t) => fetch(t.apiBase, { headers: { authorization: `Bearer ${DEMO_KEY}` } }).then((a) => a.text()),
    logged: ok("GET", "/", 404),
  },
  {
    what: "a call without a key",
    send: (t) => t.api("GET", "/instance/list", { key: null }),
    logged: ok("GET", "/instance/list", 401, null),
  },
  {
    what: "a call with a wrong key, by its fingerprint",
    send: (t) => t.api("GET", "/instance/list", { key: "not-a-key" }),
    logged: ok("GET", "/instance/list", 401, fingerprint("not-a-key")),
  },
  {
    what: "a missing resource",
    send: (t) => t.api("GET", "/instance/info", { query: { instance_uuid: "ins-nope" } }),
    logged: ok("GET", "/instance/info", 404),
  },
  {
    what: "a body that fails validation",
    send: (t) => t.api("POST", "/instance/create_by_pod", { body: { gpu_nums: "many" } }),
    logged: ok("POST", "/instance/create_by_pod", 400),
  },
  {
    what: "a body that is not JSON",
    send: (t) =>
      t.api("POST", "/instance/shutdown", {
        rawBody: "{not json",
        headers: { "content-type": "application/json" },
      }),
    logged: ok("POST", "/instance/shutdown", 400),
  },
  {
    what: "a body over the size limit",
    send: (t) =>
      fetchThroughDrop(`${t.apiBase}/instance/update_title`, {
        method: "POST",
        headers: { authorization: `Bearer ${DEMO_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ instance_uuid: "x", title: "t".repeat(2 * 1024 * 1024) }),
      }),
    logged: ok("POST", "/instance/update_title", 413),
  },
  {
    what: "a known path with another method",
    send: (t) => t.api("DELETE", "/gpu/list"),
    logged: ok("DELETE", "/gpu/list", 405),
  },
  {
    what: "an unknown path",
    send: (t) => t.api("GET", "/no/such/call"),
    logged: ok("GET", "/no/such/call", 404),
  },
  {
    what: "a call failed by an http_500 fault",
    send: async (t) => {
      await t.admin("POST", "/faults", { path: "/pod/list", kind: "http_500", count: 1 });
      await t.api("GET", "/pod/list");
    },
    logged: ok("GET", "/pod/list", 500),
  },
  {
    what: "a call failed by an http_429 fault",
    send: async (t) => {
      await t.admin("POST", "/faults", { path: "/pod/list", kind: "http_429", count: 1 });
      await t.api("GET", "/pod/list");
    },
    logged: ok("GET", "/pod/list", 429),
  },
  {
    what: "a connection reset by a fault, without an answer",
    send: async (t) => {
      await t.admin("POST", "/faults", { path: "/account/balance", kind: "reset", count: 1 });
      await fetchThroughDrop(`${t.apiBase}/account/balance`, {
        headers: { authorization: `Bearer ${DEMO_KEY}` },
      });
    },
    logged: ok("GET", "/account/balance", null),
  },
];

/** Calls that are not API calls: none of them may appear. */
const NOT_API: ((t: TestEmulator) => Promise<unknown>)[] = [
  (t) => t.admin("GET", "/clock"),
  (t) => fetch(`${t.url}/`).then((answer) => answer.text()),
  (t) => fetch(`${t.url}/services/ins-nope/8188/`).then((answer) => answer.text()),
];

describe("the emulator's request log under a rate limit", () => {
  let t: TestEmulator;
  beforeAll(async () => (t = await startTestEmulator({ ...HTTP_ERROR_STATUS, rateLimit: 1 })));
  afterAll(() => t.close());

  it("records the calls the rate limiter refused", async () => {
    // The limiter counts real time: call until it refuses one (a call follows the last within a second).
    const statuses: number[] = [];
    while (!statuses.includes(429) && statuses.length < 50)
      statuses.push((await t.api("GET", "/gpu/list")).status);
    expect(statuses).toContain(429);
    const requests = (await t.admin("GET", "/requests")).body.requests as Logged[];
    expect(requests.map((r) => r.status)).toEqual(statuses);
  });
});

describe("the emulator's request log", () => {
  let t: TestEmulator;
  beforeAll(async () => (t = await startTestEmulator(HTTP_ERROR_STATUS)));
  afterAll(() => t.close());
  beforeEach(() => t.admin("DELETE", "/requests"));

  const logged = async () =>
    ((await t.admin("GET", "/requests")).body.requests as (Logged & { time: number })[]).map(
      ({ method, path, key, status }) => ({ method, path, key, status }),
    );

  it.each(CASES.map((c) => [c.what, c] as const))("records %s, once", async (_what, c) => {
    await c.send(t);
    expect(await logged()).toEqual([c.logged]);
  });

  it("records every kind of call in the order they came, with the simulated time, and never the key itself", async () => {
    for (const c of CASES) await c.send(t);
    const requests = (await t.admin("GET", "/requests")).body.requests as { time: number }[];
    expect(await logged()).toEqual(CASES.map((c) => c.logged));
    expect(new Set(requests.map((r) => r.time))).toEqual(new Set([await t.now()]));
    expect(JSON.stringify(requests)).not.toContain(DEMO_KEY);
    expect(JSON.stringify(requests)).not.toContain("not-a-key");
  });

  it("leaves out the admin API, the console and instances' services", async () => {
    for (const call of NOT_API) await call(t);
    expect(await logged()).toEqual([]);
  });
});
