/**
 * Who may reach the emulator (emulator/core/http/access.ts): a page of another site must not drive or read the
 * local cloud, by a form or fetch sent across sites or by DNS rebinding (a Host of its own); with an admin
 * key the admin API and the console ask for it. Tools that send neither Origin nor a foreign Host (curl,
 * the SDK, these helpers) are served as before.
 */
import { Emulator, OptionError } from "pulumi-gpucloud/emulator";
import { request } from "undici";
import { createInstance, DEMO_KEY, instanceInfo, startTestEmulator, type TestEmulator } from "./helpers";

const ADMIN_KEY = "admin-key-for-tests-7c91e2";

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A request with headers fetch() would not let a test set (Host) or that a browser sets (Origin, Sec-Fetch-Site). */
async function raw(
  t: TestEmulator,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<Raw> {
  const answer = await request(`${t.url}${path}`, { method, headers });
  return { status: answer.statusCode, headers: answer.headers, text: await answer.body.text() };
}

describe("the Host allow-list, on every route", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ allowedHosts: ["emulator.internal", ".lan.example"] });
  });
  afterAll(() => t.close());

  it.each([
    ["the API", "GET", "/api/open/v2/gpu/list"],
    ["the admin API's snapshot (keys and SSH passwords)", "GET", "/_emulator/snapshot"],
    ["the console", "GET", "/"],
    ["an admin change", "POST", "/_emulator/reset"],
  ])(
    "refuses %s under a name that is not its own, with 421 naming the Host and the flag",
    async (_what, method, path) => {
      const { instance_uuid } = await createInstance(t);
      const answer = await raw(t, method, path, {
        host: "rebound.attacker.example:8787",
        authorization: `Bearer ${DEMO_KEY}`,
      });
      expect(answer.status).toBe(421);
      expect(answer.text).toMatch(/Host \\?"rebound\.attacker\.example:8787\\?"/);
      expect(answer.text).toContain("--allowed-host rebound.attacker.example");
      expect(answer.text).not.toContain(DEMO_KEY);
      expect((await instanceInfo(t, instance_uuid)).body.code).toBe(0);
    },
  );

  it.each([
    "localhost:8787",
    "LOCALHOST",
    "console.localhost:1",
    "127.0.0.1",
    "127.9.9.9:80",
    "[::1]:8787",
    "192.168.1.20:8787",
    "emulator.internal:8787",
    "lan.example",
    "box.lan.example:8787",
    // A fully qualified name ends with the root's dot: the same host.
    "localhost.:8787",
    "LOCALHOST.",
    "console.localhost.:1",
    "127.0.0.1.:8787",
    "emulator.internal.:8787",
    "box.lan.example.",
  ])("answers under Host %s (loopback, an IP address, or an allowed name)", async (host) => {
    expect((await raw(t, "GET", "/_emulator/clock", { host })).status).toBe(200);
  });

  it.each([
    "emulator.internal.attacker.example",
    "xlan.example",
    "localhost.attacker.example",
    "localhost.attacker.example.",
    "localhost..",
    ".",
    "a@localhost",
  ])("refuses Host %s, which only looks like an allowed one", async (host) => {
    expect((await raw(t, "GET", "/_emulator/clock", { host })).status).toBe(421);
  });

  it("advises allowing a fully qualified name without its trailing dot, as --allowed-host takes it", async () => {
    const answer = await raw(t, "GET", "/_emulator/clock", { host: "rebound.attacker.example.:8787" });
    expect(answer.status).toBe(421);
    expect(answer.text).toContain("--allowed-host rebound.attacker.example ");
  });

  it("answers under the name given as --host", async () => {
    const named = await startTestEmulator({ host: "localhost" });
    try {
      expect((await raw(named, "GET", "/_emulator/clock", { host: "localhost:1" })).status).toBe(200);
      expect((await raw(named, "GET", "/_emulator/clock", { host: "localhost.:1" })).status).toBe(200);
      expect((await raw(named, "GET", "/_emulator/clock", { host: "other.example" })).status).toBe(421);
    } finally {
      await named.close();
    }
  });

  it("refuses an allowed host that is no host name, naming the option", () => {
    expect(() => new Emulator({ allowedHosts: ["http://x.example/"] })).toThrow(OptionError);
    expect(() => new Emulator({ allowedHosts: ["http://x.example/"] })).toThrow(
      /allowedHosts: \[0\]: must be a host name/,
    );
  });
});

describe("requests from another site's page, to the admin API and the console", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator();
  });
  afterAll(() => t.close());

  // What a browser sends for a form post or a no-cors fetch from a page that is not the emulator's own.
  const ANOTHER_SITE: [string, Record<string, string>][] = [
    ["another site", { origin: "https://attacker.example", "sec-fetch-site": "cross-site" }],
    ["another port of localhost", { origin: "http://localhost:3000", "sec-fetch-site": "same-site" }],
    ["a sandboxed frame (Origin: null)", { origin: "null", "sec-fetch-site": "cross-site" }],
    ["a browser that sends only Origin", { origin: "http://127.0.0.1:1" }],
    ["a browser that sends only Sec-Fetch-Site", { "sec-fetch-site": "same-site" }],
  ];

  it.each(ANOTHER_SITE)(
    "refuses a reset and a key's disabling from %s with 403, changing nothing",
    async (_from, headers) => {
      const { instance_uuid } = await createInstance(t);
      const reset = await raw(t, "POST", "/_emulator/reset", headers);
      expect(reset.status).toBe(403);
      expect(JSON.parse(reset.text)).toMatchObject({ code: 403, data: { error: "cross_site_request" } });
      expect((await raw(t, "POST", `/_emulator/keys/${DEMO_KEY}/disable`, headers)).status).toBe(403);
      const console = await raw(t, "POST", "/console/actions/reset", {
        ...headers,
        accept: "application/json",
      });
      expect(console.status).toBe(403);
      expect((await instanceInfo(t, instance_uuid)).body.code).toBe(0);
    },
  );

  it("refuses an admin path spelled another way (%5F, a trailing slash) the same", async () => {
    const headers = { origin: "https://attacker.example" };
    expect((await raw(t, "POST", "/%5Femulator/reset", headers)).status).toBe(403);
    expect((await raw(t, "POST", "/_emulator/reset/", headers)).status).toBe(403);
  });

  it("takes changes from the emulator's own pages and from tools that send neither header", async () => {
    const own = { origin: t.url, "sec-fetch-site": "same-origin" };
    expect((await raw(t, "POST", "/_emulator/reset", own)).status).toBe(200);
    expect((await raw(t, "POST", "/_emulator/reset")).status).toBe(200);
    expect((await t.admin("POST", "/faults", { path: "/gpu/list", kind: "http_500", count: 1 })).status).toBe(
      200,
    );
  });

  it("lets another site link to a console page and read nothing else into it (GET is not refused)", async () => {
    expect((await raw(t, "GET", "/", { "sec-fetch-site": "cross-site" })).status).toBe(200);
  });
});

describe("the admin key", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ adminKey: ADMIN_KEY, apiKeys: [DEMO_KEY] });
  });
  afterAll(() => t.close());

  it("is asked of the admin API with 401 and WWW-Authenticate; an API key is not accepted", async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: `Bearer ${DEMO_KEY}` },
      { authorization: `Bearer ${ADMIN_KEY}x` },
    ];
    for (const headers of attempts) {
      const answer = await raw(t, "GET", "/_emulator/snapshot", headers);
      expect(answer.status).toBe(401);
      expect(answer.headers["www-authenticate"]).toMatch(/^Bearer /);
      expect(answer.text).toContain("Authorization: Bearer <admin key>");
      expect(answer.text).not.toContain(DEMO_KEY);
    }
    const reset = await raw(t, "POST", "/_emulator/reset", { authorization: `Bearer ${DEMO_KEY}` });
    expect(reset.status).toBe(401);
  });

  it("opens the admin API to a script that sends it as a bearer header", async () => {
    const answer = await raw(t, "GET", "/_emulator/clock", { authorization: `Bearer ${ADMIN_KEY}` });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({ now: expect.any(Number) });
    const before = await t.now();
    expect(await t.advance(60)).toBe(before + 60);
  });

  it("leaves the API to its own keys", async () => {
    expect((await t.api("GET", "/balance/info")).body.code).toBe(0);
    expect((await t.api("GET", "/balance/info", { key: ADMIN_KEY })).status).toBe(401);
  });

  it("shows a person the sign-in form on every console page, and signs them in with a strict session cookie", async () => {
    const page = await raw(t, "GET", "/console/faults");
    expect(page.status).toBe(401);
    expect(page.text).toContain('name="admin_key"');
    expect(page.text).toContain('value="/console/faults"');
    expect(page.text).not.toContain("Faults and requests");

    const form = (fields: Record<string, string>) =>
      request(`${t.url}/console/sign-in`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(fields).toString(),
      });
    const wrong = await form({ admin_key: DEMO_KEY, return_to: "/console/faults" });
    expect(wrong.statusCode).toBe(401);
    expect(await wrong.body.text()).toContain("not this emulator&#39;s admin key");
    expect(wrong.headers["set-cookie"]).toBeUndefined();

    const right = await form({ admin_key: ADMIN_KEY, return_to: "/console/faults" });
    await right.body.dump();
    expect(right.statusCode).toBe(303);
    expect(right.headers.location).toBe("/console/faults");
    const cookie = String(right.headers["set-cookie"]);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).not.toContain(ADMIN_KEY);
    const session = cookie.split(";")[0];

    const signedIn = await raw(t, "GET", "/console/faults", { cookie: session });
    expect(signedIn.status).toBe(200);
    expect(signedIn.text).toContain("Faults and requests");
    expect((await raw(t, "GET", "/_emulator/clock", { cookie: session })).status).toBe(200);
    const forged = `${session.split("=")[0]}=${"A".repeat(43)}`;
    expect((await raw(t, "GET", "/console/faults", { cookie: forged })).status).toBe(401);
  });

  it("still refuses another site's page that holds the session (the cookie is SameSite=Strict, and Origin is judged first)", async () => {
    const answer = await raw(t, "POST", "/_emulator/reset", {
      authorization: `Bearer ${ADMIN_KEY}`,
      origin: "http://localhost:3000",
    });
    expect(answer.status).toBe(403);
  });

  it("serves the console's styles without it, for the sign-in page", async () => {
    expect((await raw(t, "GET", "/console/assets/console.css")).status).toBe(200);
  });

  it("must be long and differ from every API key", () => {
    expect(() => new Emulator({ adminKey: "short" })).toThrow("adminKey: must be at least 16 characters");
    expect(() => new Emulator({ adminKey: ADMIN_KEY, apiKeys: [`alice:${ADMIN_KEY}`] })).toThrow(
      "adminKey: must differ from every API key",
    );
  });
});

describe("listening beyond loopback", () => {
  it("warns what becomes reachable, and that --admin-key protects it", () => {
    const open = new Emulator({ host: "0.0.0.0" });
    expect(open.notices).toEqual([
      expect.stringMatching(/^warning: --host 0\.0\.0\.0 is not a loopback address/),
    ]);
    expect(open.notices[0]).toContain("GET /_emulator/snapshot (every API key and SSH password)");
    expect(open.notices[0]).toContain("the web console");
    expect(open.notices[0]).toContain("demo-key, the default, is public");
    expect(open.notices[0]).toContain("--admin-key");
    const guarded = new Emulator({ host: "0.0.0.0", adminKey: ADMIN_KEY, apiKeys: ["mine-0123"] });
    expect(guarded.notices[0]).toContain("ask for the admin key");
    expect(guarded.notices[0]).not.toContain("demo-key");
  });

  it.each(["127.0.0.1", "127.1.2.3", "::1", "localhost"])("says nothing for %s", (host) => {
    expect(new Emulator({ host }).notices).toEqual([]);
  });
});
