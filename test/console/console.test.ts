/**
 * The web console over HTTP, without a browser: its pages, its escaping, its secrets and its actions,
 * which must meet the API's rules. The browser test (console.e2e.test.ts) drives the same pages in chromium.
 */
import { userOfKeySpec } from "pulumi-gpucloud/emulator";
import {
  createInstance,
  DEMO_KEY,
  DEMO_USER,
  instanceInfo,
  pod,
  runningInstance,
  startTestEmulator,
  type TestEmulator,
} from "../emulator/helpers";

const BOB_KEY = "bob:bob-key";
const BOB = userOfKeySpec(BOB_KEY);

let t: TestEmulator;

beforeEach(async () => {
  t = await startTestEmulator({ apiKeys: [DEMO_KEY, BOB_KEY] });
});

afterEach(async () => {
  await t.close();
});

async function page(path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${t.url}${path}`, { headers });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Posts a console form the way the page script does (asking for JSON), or as a plain form with `accept`. */
async function act(action: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(`${t.url}/console/actions/${action}`, {
    method: "POST",
    headers: { accept: "application/json", ...headers },
    body: new URLSearchParams(fields),
    redirect: "manual",
  });
  const text = await response.text();
  const json = response.headers.get("content-type")?.includes("json") ? JSON.parse(text) : undefined;
  return { status: response.status, headers: response.headers, text, json };
}

function instancePath(user: string, uuid: string): string {
  return `/console/users/${encodeURIComponent(user)}/instances/${uuid}`;
}

async function statusOf(uuid: string, key?: string): Promise<number> {
  return (await instanceInfo(t, uuid, key)).body.data.status;
}

describe("the console's pages", () => {
  it("serves HTML at / with a policy that runs scripts from the console only, beside the API and the admin API", async () => {
    const home = await page("/");
    expect(home.status).toBe(200);
    expect(home.headers.get("content-type")).toMatch(/^text\/html/);
    expect(home.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(home.text).toContain("<h1>Instances</h1>");
    expect((await t.api("GET", "/gpu/list")).body.code).toBe(0);
    expect((await t.admin("GET", "/clock")).body.now).toBe(await t.now());
  });

  it("shows every user's instances with status, GPU, hourly price, utilisation and services", async () => {
    const uuid = await runningInstance(t, { gpuNums: 2 });
    await t.admin("PUT", `/instances/${uuid}/utilization`, { gpu: 85, fb: 40 });
    const bobs = (await createInstance(t, { key: "bob-key" })).instance_uuid;
    const { text } = await page("/");
    expect(text).toContain(uuid);
    expect(text).toContain(bobs);
    expect(text).toMatch(/running<\/span> <span class="muted">\(2\)/);
    expect(text).toContain("2 × 4090D");
    // ComfyUI 0.2 CNY/h + 2 x 4090D at 1.88 CNY/h.
    expect(text).toContain("3.96 CNY/h");
    expect(text).toContain("GPU 1: 85 %, memory 40 %");
    // A ComfyUI pod's web service is named for the pod and served by the emulator itself.
    expect(text).toMatch(/ComfyUI\s*<small><code>http:\/\/[^<]+\/services\/[^<]+\/8188\/<\/code><\/small>/);
    expect(text).toContain(`${t.url}/services/${uuid}/8188/`);
    expect(text).toContain("→ running in 1 min");
  });

  it("renders a title holding markup as text, in the page and in the rename field", async () => {
    const uuid = (await createInstance(t)).instance_uuid;
    const title = `<script>alert(1)</script>"'&`;
    await t.api("POST", "/instance/update_title", { body: { instance_uuid: uuid, title } });
    const escaped = "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;";
    for (const path of ["/", instancePath(DEMO_USER, uuid)]) {
      const { text } = await page(path);
      expect(text).not.toContain("<script>alert(1)");
      expect(text).toContain(escaped);
    }
    expect((await page(instancePath(DEMO_USER, uuid))).text).toContain(`value="${escaped}"`);
  });

  it("never shows an SSH password, on any page or live part", async () => {
    const uuid = await runningInstance(t);
    const ssh = (await instanceInfo(t, uuid)).body.data.server_map.find(
      (s: { port_type: string }) => s.port_type === "ssh",
    );
    expect(ssh.ssh_info.password.length).toBeGreaterThan(8);
    for (const path of [
      "/",
      instancePath(DEMO_USER, uuid),
      `/console/users/${DEMO_USER}`,
      "/console/faults",
    ]) {
      for (const headers of [{}, { "x-console-fragment": "live" }] as Record<string, string>[]) {
        const { status, text } = await page(path, headers);
        expect(status).toBe(200);
        expect(text).not.toContain(ssh.ssh_info.password);
        expect(text).not.toContain(DEMO_KEY);
      }
    }
    expect((await page(instancePath(DEMO_USER, uuid))).text).toContain("password hidden");
  });

  it("closes every form, table, section and list it opens, on every page", async () => {
    const uuid = await runningInstance(t);
    await t.api("POST", "/instance/set_idle_close", {
      body: { instance_uuid: uuid, idle_period_minutes: 30 },
    });
    await t.admin("POST", "/faults", { path: "/gpu/list", kind: "http_500", count: 1 });
    for (const path of [
      "/",
      instancePath(DEMO_USER, uuid),
      `/console/users/${DEMO_USER}`,
      "/console/faults",
      "/console/gpus",
    ]) {
      const { text } = await page(path);
      for (const tag of ["form", "table", "section", "ul", "dl", "label", "select", "div", "main"]) {
        const opened = text.match(new RegExp(`<${tag}[\\s>]`, "g"))?.length ?? 0;
        const closed = text.match(new RegExp(`</${tag}>`, "g"))?.length ?? 0;
        expect({ path, tag, count: closed }).toEqual({ path, tag, count: opened });
      }
    }
  });

  it("answers the live part alone when the page script asks, with the version the full page carries", async () => {
    const full = await page("/");
    const live = await page("/", { "x-console-fragment": "live" });
    const version = live.headers.get("x-console-version");
    expect(live.text).not.toContain("<!doctype html>");
    expect(live.text).toContain("<h1>Instances</h1>");
    expect(full.text).toContain(`data-version="${version}"`);
    await createInstance(t);
    const after = await page("/", { "x-console-fragment": "live" });
    expect(after.headers.get("x-console-version")).not.toBe(version);
  });

  it("shows a user's money: balance, bills, recharges and a model run's reservation and settlement", async () => {
    const submitted = await t.api("POST", "/model-runs/videos", {
      body: { idempotency_key: "console-1", inputs: { model: "demo-video", prompt: "a lighthouse" } },
    });
    expect(submitted.body.code).toBe(0);
    await t.advance(60);
    const { text } = await page(`/console/users/${DEMO_USER}`);
    expect(text).toContain(submitted.body.data.run_id);
    expect(text).toMatch(/reserved 0\.50 CNY/);
    expect(text).toMatch(/settled 0\.50 CNY/);
    expect(text).toContain("999.50 CNY");
    expect(text).toContain("RC202501010001");
    expect(text).toContain("model_run");
  });

  it("lists the API paths a fault can be armed on, and the request log", async () => {
    await t.api("GET", "/balance/info");
    const { text } = await page("/console/faults");
    expect(text).toContain('<option value="/instance/create_by_pod">');
    expect(text).not.toContain(":asset_id");
    expect(text).toMatch(/<code>\/balance\/info<\/code><\/th>\s*<td><code>key_/);
  });

  it("shows every GPU model's stock: the cards in use, the free ones and the refusals at random", async () => {
    await t.admin("PUT", "/gpus/4090D/stock", { free: 3 });
    await t.admin("PUT", "/gpus/5090/stock", { free: null, refuse_probability: 0.25, seed: 9 });
    await createInstance(t, { gpu: "4090D", gpuNums: 2 });
    const { status, text } = await page("/console/gpus");
    expect(status).toBe(200);
    expect(text).toContain("<h1>GPU stock</h1>");
    expect(text).toMatch(/4090D <code class="id">[^<]+<\/code><\/th>\s*<td>2<\/td>\s*<td>1<\/td>/);
    expect(text).toMatch(
      /5090 <code class="id">[^<]+<\/code><\/th>\s*<td>0<\/td>\s*<td><span class="muted">unlimited/,
    );
    expect(text).toContain("25 % of creates and starts (seed 9)");
    expect((await page("/")).text).toContain('href="/console/gpus"');
  });

  it("answers 404 for a user or instance that is not there, and for another user's instance", async () => {
    const alices = (await createInstance(t)).instance_uuid;
    expect((await page("/console/users/nobody")).status).toBe(404);
    const foreign = await page(instancePath(BOB, alices));
    expect(foreign.status).toBe(404);
    expect(foreign.text).toContain(`instance not found: ${alices}`);
  });
});

describe("the console's actions", () => {
  it("rename, stop, start, restart, save as image and destroy change what the API sees", async () => {
    const uuid = await runningInstance(t);
    const target = { user: DEMO_USER, instance_uuid: uuid };

    expect((await act("rename", { ...target, title: "from-console" })).json.ok).toBe(true);
    expect((await instanceInfo(t, uuid)).body.data.title).toBe("from-console");

    const stopped = await act("stop", target);
    expect(stopped.json).toMatchObject({ ok: true, message: expect.stringContaining("shutting down") });
    expect(await statusOf(uuid)).toBe(21);
    await t.advance(10);
    expect((await act("save-image", target)).json.ok).toBe(true);
    expect((await t.api("GET", "/image/private/list")).body.data.image_list).toHaveLength(1);
    expect((await act("start", target)).json.ok).toBe(true);
    expect(await statusOf(uuid)).toBe(24);
    await t.advance(30);
    expect((await act("restart", target)).json.ok).toBe(true);
    expect(await statusOf(uuid)).toBe(27);

    expect((await act("destroy", target)).json.ok).toBe(true);
    expect((await instanceInfo(t, uuid)).body.code).toBe(-1);
  });

  it("sets and cancels an idle policy and sets the utilisation the idle check sees", async () => {
    const uuid = await runningInstance(t);
    const target = { user: DEMO_USER, instance_uuid: uuid };
    const set = await act("idle-policy", { ...target, idle_period_minutes: "10", idle_gpu_threshold: "20" });
    expect(set.json.ok).toBe(true);
    expect((await instanceInfo(t, uuid)).body.data.idle_close).toEqual({
      idle_period_minutes: 10,
      destroy: false,
      idle_gpu_threshold: 20,
      idle_fb_threshold: 0,
    });
    expect((await act("utilization", { ...target, gpu: "90", fb: "3" })).json.ok).toBe(true);
    await t.advance(15 * 60);
    expect(await statusOf(uuid)).toBe(2);
    expect((await act("utilization", { ...target, gpu: "0", fb: "0" })).json.ok).toBe(true);
    expect((await act("cancel-idle-policy", target)).json.ok).toBe(true);
    expect((await instanceInfo(t, uuid)).body.data.idle_close).toBeNull();
    await t.advance(15 * 60);
    expect(await statusOf(uuid)).toBe(2);
  });

  it("refuses what the API refuses, with the API's message", async () => {
    const uuid = (await createInstance(t)).instance_uuid;
    const target = { user: DEMO_USER, instance_uuid: uuid };
    const early = await act("stop", target);
    expect(early.status).toBe(400);
    expect(early.json).toEqual({
      ok: false,
      message: `Could not stop the instance: instance ${uuid} cannot shutdown in status 1; wait for a status that allows it`,
      return_to: "/",
    });
    const long = await act("rename", { ...target, title: "x".repeat(51) });
    expect(long.json.message).toBe("Could not rename the instance: title: must be at most 50 characters");
    const period = await act("idle-policy", { ...target, idle_period_minutes: "15" });
    expect(period.json.message).toContain("idle_period_minutes: must be one of 0, 10, 30, 60, 120");
    const typo = await act("utilization", { ...target, gpu: "lots", fb: "0" });
    expect(typo.json.message).toBe("Could not set the utilisation: gpu: must be a number");
    expect(await statusOf(uuid)).toBe(1);
  });

  it("sets a model's stock by hand, which the next create meets, and refuses a bad value with the rule", async () => {
    const gpu = (await t.admin("GET", "/gpus")).body.gpus as { gpu_uuid: string; gpu_name: string }[];
    const uuid4090D = gpu.find((g) => g.gpu_name === "4090D")!.gpu_uuid;
    await createInstance(t);
    const set = await act("gpu-stock", { gpu_uuid: uuid4090D, free: "0", refuse_probability: "0" });
    expect(set.json).toEqual({ ok: true, message: "4090D has 0 free cards now, 1 in use.", return_to: "/" });
    const refused = await t.api("POST", "/instance/create_by_pod", {
      body: { pod_uuid: (await pod(t, "ComfyUI")).uuid, gpu_uuid: uuid4090D, gpu_nums: 1 },
    });
    expect(refused.body.msg).toBe(
      "no free 4090D cards: 1 asked, 0 free; try another GPU model, fewer cards or later",
    );

    const bad = await act("gpu-stock", { gpu_uuid: uuid4090D, free: "lots" });
    expect(bad.json.message).toBe(
      "Could not set the GPU stock: free: must be a whole number of cards, at least 0, or null for unlimited",
    );
    const odds = await act("gpu-stock", { gpu_uuid: uuid4090D, free: "", refuse_probability: "2" });
    expect(odds.json.message).toBe("Could not set the GPU stock: refuse_probability: must be at most 1");
    const unlimited = await act("gpu-stock", { gpu_uuid: uuid4090D, free: "", refuse_probability: "" });
    expect(unlimited.json.message).toBe("4090D has unlimited cards now, 1 in use.");
    const unknown = await act("gpu-stock", { gpu_uuid: "gpu-nope", free: "1" });
    expect([unknown.status, unknown.json.ok]).toEqual([404, false]);
  });

  it("reaches an instance only through its owner", async () => {
    const alices = (await createInstance(t)).instance_uuid;
    const refused = await act("rename", { user: BOB, instance_uuid: alices, title: "stolen" });
    expect(refused.status).toBe(404);
    const utilisation = await act("utilization", { user: BOB, instance_uuid: alices, gpu: "50", fb: "50" });
    expect(utilisation.status).toBe(404);
    expect((await instanceInfo(t, alices)).body.data.title).toBe("");
  });

  it("advances the clock, arms and clears faults, clears the request log and resets", async () => {
    const before = await t.now();
    expect((await act("advance", { seconds: "90" })).json.ok).toBe(true);
    expect(await t.now()).toBe(before + 90);
    expect((await act("advance", { seconds: "0" })).json.message).toContain("seconds: must be at least 1");

    const armed = await act("inject-fault", { path: "/balance/info", kind: "http_503", count: "2" });
    expect(armed.json.ok).toBe(true);
    expect((await t.admin("GET", "/faults")).body.faults).toEqual([
      { path: "/balance/info", kind: "http_503", count: 2 },
    ]);
    expect((await t.api("GET", "/balance/info")).status).toBe(503);
    const stale = await act("clear-fault", { index: "0", path: "/gpu/list", kind: "http_503" });
    expect(stale.status).toBe(404);
    expect((await act("clear-fault", { index: "0", path: "/balance/info", kind: "http_503" })).json.ok).toBe(
      true,
    );
    expect((await t.admin("GET", "/faults")).body.faults).toEqual([]);
    expect((await t.api("GET", "/balance/info")).status).toBe(200);
    const badKind = await act("inject-fault", { path: "/balance/info", kind: "meltdown" });
    expect(badKind.json.message).toMatch(/^Could not inject the fault: kind: /);

    expect((await act("clear-requests", {})).json.ok).toBe(true);
    expect((await t.admin("GET", "/requests")).body.requests).toEqual([]);

    await createInstance(t);
    expect((await act("reset", {})).json.ok).toBe(true);
    expect((await t.api("GET", "/instance/list")).body.data.total).toBe(0);
  });

  it("without the page script, redirects back to the page with the outcome, and never off the console", async () => {
    const done = await act(
      "advance",
      { seconds: "60", return_to: "/console/faults" },
      { accept: "text/html" },
    );
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe(
      `/console/faults?notice=${encodeURIComponent("The clock moved 60 simulated seconds.").replace(/%20/g, "+")}`,
    );
    const shown = await page(done.headers.get("location")!);
    expect(shown.text).toContain('<p id="notice" role="status">The clock moved 60 simulated seconds.</p>');

    for (const elsewhere of [
      "//evil.example/x",
      "/api/open/v2/instance/list",
      "/console/actions/reset",
      "/console/users/../../x",
    ]) {
      const answer = await act("advance", { seconds: "1", return_to: elsewhere }, { accept: "text/html" });
      expect(answer.headers.get("location")).toMatch(/^\/\?notice=/);
    }
  });

  it("refuses an action posted from another site and leaves the state alone", async () => {
    const before = await t.now();
    const crossSite = await act("advance", { seconds: "60" }, { "sec-fetch-site": "cross-site" });
    expect(crossSite.status).toBe(403);
    const otherOrigin = await act("advance", { seconds: "60" }, { origin: "http://evil.example" });
    expect(otherOrigin.status).toBe(403);
    expect(await t.now()).toBe(before);
    const sameOrigin = await act("advance", { seconds: "60" }, { origin: t.url });
    expect(sameOrigin.status).toBe(200);
  });

  it("answers 404 for an action it does not have, inherited object keys included", async () => {
    for (const name of ["launch-missiles", "constructor", "__proto__", "toString"]) {
      const answer = await act(name, {});
      expect(answer.status).toBe(404);
      expect(answer.json.ok).toBe(false);
    }
  });
});
