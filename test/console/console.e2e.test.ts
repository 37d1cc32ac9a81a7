/**
 * The web console in a real browser (Debian's Chromium through playwright-core) against a running
 * emulator with a frozen clock: a person renames an instance, stops another, advances the clock, takes
 * the free GPU cards so the stopped one cannot start, and injects a fault, each checked through the API; then `preview --refresh` of the fleet program shows the
 * drift made in the browser. Last, pages of other sites try what a browser lets them: forms and no-cors
 * fetches at the admin API and the console, and a name of their own resolved to the emulator (DNS
 * rebinding, made here by Chromium's host resolver rules). Every wait is for a state of the page, never
 * for time.
 *
 * Screenshots of the main pages go to $TMPDIR/gpucloud-console-screenshots; with
 * UPDATE_CONSOLE_SCREENSHOT=1 the instances page is also copied to docs/console.png, the picture of docs/emulator.md.
 */
import * as fs from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import type { Page } from "playwright-core";
import { compiledExample } from "../examples/helpers";
import {
  createInstance,
  DEMO_KEY,
  DEMO_USER,
  instanceInfo,
  startTestEmulator,
  type TestEmulator,
} from "../emulator/helpers";
import { openBrowser, type Browser } from "./browser";
import { REPO_ROOT } from "../../dev/self-link";
import { secret, Stack, type Step } from "../../testing";

const SCREENSHOTS = path.join(os.tmpdir(), "gpucloud-console-screenshots");
const PAGE_SCREENSHOT = path.join(REPO_ROOT, "docs", "console.png");
/** A name of an attacker's own that Chromium resolves to loopback, as a rebinding DNS server would. */
const REBOUND_NAME = "rebound.attacker.test";
/** A fixed simulated start, so the pages (and the screenshot of docs/emulator.md) show the same time every run. */
const START = Date.UTC(2026, 2, 2, 9, 0, 0) / 1000;
/** Chromium start-up, a Pulumi up and the walk through the pages, on a loaded machine. */
jest.setTimeout(300_000);

let t: TestEmulator;
let stack: Stack;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
/** Set while pages of other sites are refused on purpose. */
let refusalsWanted = false;
const uuidOf: Record<string, string> = {};

beforeAll(async () => {
  browser = await openBrowser([`--host-resolver-rules=MAP ${REBOUND_NAME} 127.0.0.1`]);
  page = browser.page;
  page.on("pageerror", (error) => pageErrors.push(error.message));
  page.on("console", (message) => {
    // Chromium logs every answer of 400 or more; a refused action's, and the refusals of other sites'
    // requests, are the outcomes the tests want.
    const refusedAction = message.location().url.includes("/console/actions/");
    if (message.type() === "error" && !refusedAction && !refusalsWanted) pageErrors.push(message.text());
  });
  fs.rmSync(SCREENSHOTS, { recursive: true, force: true });
  fs.mkdirSync(SCREENSHOTS, { recursive: true });

  t = await startTestEmulator({ apiKeys: [DEMO_KEY], startTime: START });
  stack = await Stack.open({
    program: compiledExample("fleet"),
    project: "gpucloud-console",
    stack: "test",
    config: {
      "gpucloud:baseUrl": t.url,
      "gpucloud:apiKey": secret(DEMO_KEY),
      "gpucloud:pollIntervalMs": "20",
      "fleet:count": "2",
    },
  });
  await whileStarting(stack.up());
  for (const resource of stack.current.resources) uuidOf[resource.name] = resource.id;
  await submitModelRun();
});

afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await t?.close();
});

afterEach(() => {
  // Taken out before the check, so one step's errors fail that step only.
  const errors = pageErrors.splice(0);
  expect(errors).toEqual([]);
});

/** Moves the frozen clock a minute whenever an instance is starting, until `work` ends. */
async function whileStarting<T>(work: Promise<T>): Promise<T> {
  let done = false;
  const settled = work.finally(() => (done = true));
  while (!done) {
    const { instance_list } = (await t.api("GET", "/instance/list")).body.data;
    if (instance_list.some((i: { status: number }) => i.status === 1)) await t.advance(60);
    // Give the provider's polls a turn; the outcome does not depend on how long this is.
    await Promise.race([settled.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 20))]);
  }
  return settled;
}

/** A video generation run, so the account page has money moving: reserved, then settled. */
async function submitModelRun(): Promise<void> {
  const submitted = await t.api("POST", "/model-runs/videos", {
    body: { idempotency_key: "console-e2e", inputs: { model: "demo-video", prompt: "a lighthouse at dusk" } },
  });
  expect(submitted.body.code).toBe(0);
  await t.advance(40);
}

async function screenshot(name: string): Promise<string> {
  const file = path.join(SCREENSHOTS, `${name}.png`);
  // The body, not the window: as tall as the page's content, however tall the window.
  await page.locator("body").screenshot({ path: file });
  return file;
}

function row(title: string) {
  return page.getByRole("row", { name: new RegExp(`\\b${title}\\b`) });
}

async function said(text: string): Promise<void> {
  await page.getByRole("status").filter({ hasText: text }).waitFor();
}

async function status(uuid: string): Promise<number> {
  return (await instanceInfo(t, uuid)).body.data.status;
}

describe("the web console in a browser", () => {
  it("renames an instance and sets its utilisation from the instance's page", async () => {
    await page.goto(`${t.url}/`);
    await row("fleet-0").getByRole("link", { name: "fleet-0" }).click();
    await page.getByRole("heading", { level: 1, name: "Instance fleet-0" }).waitFor();

    await page.getByLabel("Title").fill("renamed-in-browser");
    await page.getByRole("button", { name: "Rename" }).click();
    await said('to "renamed-in-browser"');
    await page.getByRole("heading", { level: 1, name: "Instance renamed-in-browser" }).waitFor();
    expect((await instanceInfo(t, uuidOf["fleet-0"])).body.data.title).toBe("renamed-in-browser");

    await page.getByLabel("GPU utilisation (%)").fill("85");
    await page.getByLabel("Memory utilisation (%)").fill("40");
    await page.getByRole("button", { name: "Set utilisation" }).click();
    await said("now reports 85 % and memory 40 %");
    const state = (await t.admin("GET", "/state")).body as unknown as {
      rooms: { instances: { instance_uuid: string; utilization: unknown }[] };
    };
    const fleet0 = state.rooms.instances.find((i) => i.instance_uuid === uuidOf["fleet-0"]);
    expect(fleet0?.utilization).toEqual([{ gpu: 85, fb: 40 }]);
    await screenshot("instance");
  });

  it("stops another instance from the table and advances the clock until it has stopped", async () => {
    await page.getByRole("navigation").getByRole("link", { name: "Instances" }).click();
    await page.getByRole("heading", { level: 1, name: "Instances" }).waitFor();
    await row("fleet-1").getByRole("button", { name: "Stop", exact: true }).click();
    await said("Stop requested");
    await row("fleet-1").getByText("shutting down", { exact: true }).waitFor();
    expect(await status(uuidOf["fleet-1"])).toBe(21);

    const before = await t.now();
    await page.getByLabel("Seconds to advance").fill("60");
    await page.getByRole("button", { name: "Advance clock" }).click();
    await said("The clock moved 60 simulated seconds.");
    await row("fleet-1").getByText("stopped", { exact: true }).waitFor();
    expect(await t.now()).toBe(before + 60);
    expect(await status(uuidOf["fleet-1"])).toBe(22);
    const shot = await screenshot("instances");
    if (process.env.UPDATE_CONSOLE_SCREENSHOT === "1") {
      fs.mkdirSync(path.dirname(PAGE_SCREENSHOT), { recursive: true });
      fs.copyFileSync(shot, PAGE_SCREENSHOT);
    }
  });

  it("shows the API's refusal when a stopped instance is stopped again", async () => {
    await row("fleet-1").getByRole("button", { name: "Stop", exact: true }).click();
    await page.getByRole("alert").filter({ hasText: "cannot shutdown in status 22" }).waitFor();
    expect(await status(uuidOf["fleet-1"])).toBe(22);
  });

  it("takes the free 4090D cards on the GPU stock page; the stopped instance's start then shows the refusal", async () => {
    await page.getByRole("navigation").getByRole("link", { name: "GPU stock" }).click();
    await page.getByRole("heading", { level: 1, name: "GPU stock" }).waitFor();
    const stock4090D = page.getByRole("row", { name: /^4090D/ });
    // fleet-0 runs on one card; fleet-1 is stopped and holds none.
    await stock4090D.getByRole("cell", { name: "1", exact: true }).waitFor();
    await stock4090D.getByLabel("Free cards").fill("0");
    await stock4090D.getByRole("button", { name: "Set" }).click();
    await said("4090D has 0 free cards now, 1 in use.");
    await screenshot("gpu-stock");

    await page.getByRole("navigation").getByRole("link", { name: "Instances" }).click();
    await row("fleet-1").getByRole("button", { name: "Start", exact: true }).click();
    await page.getByRole("alert").filter({ hasText: "no free 4090D cards: 1 asked, 0 free" }).waitFor();
    expect(await status(uuidOf["fleet-1"])).toBe(22);

    expect((await t.admin("PUT", "/gpus/4090D/stock", { free: null })).status).toBe(200);
  });

  it("injects a fault the API then answers with, and shows it used up without a reload", async () => {
    await page.getByRole("navigation").getByRole("link", { name: "Faults and requests" }).click();
    await page.getByRole("heading", { level: 1, name: "Faults and requests" }).waitFor();
    await page.getByRole("button", { name: "Clear request log" }).click();
    await said("The request log is empty.");

    await page.getByLabel("API path").fill("/balance/info");
    await page.getByLabel("Kind").selectOption("http_503");
    await page.getByLabel("Calls to fail").fill("1");
    await page.getByRole("button", { name: "Inject fault" }).click();
    await said("Armed http_503 on /balance/info.");
    expect((await t.admin("GET", "/faults")).body.faults).toEqual([
      { path: "/balance/info", kind: "http_503", count: 1 },
    ]);
    await page.getByRole("row", { name: /\/balance\/info http_503/ }).waitFor();

    expect((await t.api("GET", "/balance/info")).status).toBe(503);
    // The page polls its live part: the fault's use shows up in the log with no click.
    await page.getByRole("row", { name: /GET \/balance\/info key_\w+ 503/ }).waitFor();
    await page.getByText("No pending faults.").waitFor();
    await screenshot("faults");
  });

  it("clears a pending fault", async () => {
    await page.getByLabel("API path").fill("/instance/list");
    await page.getByLabel("Kind").selectOption("reset");
    await page.getByRole("button", { name: "Inject fault" }).click();
    await said("Armed reset on /instance/list.");
    await page.getByRole("button", { name: "Clear reset on /instance/list" }).click();
    await said("Cleared reset on /instance/list.");
    expect((await t.admin("GET", "/faults")).body.faults).toEqual([]);
    await page.getByText("No pending faults.").waitFor();
  });

  it("shows a user's money: balance, the model run's reservation and settlement, and the bills", async () => {
    await page
      .getByRole("navigation")
      .getByRole("link", { name: `Account ${DEMO_USER}` })
      .click();
    await page.getByRole("heading", { level: 1, name: `Account ${DEMO_USER}` }).waitFor();
    const run = page.getByRole("table", { name: /Model runs/ }).getByRole("row", { name: /demo-video/ });
    await run.getByText(/reserved 0\.50 CNY/).waitFor();
    await run.getByText(/settled 0\.50 CNY/).waitFor();
    const balance = (await t.api("GET", "/balance/info")).body.data.balance as number;
    const shown = await page.getByRole("definition").first().innerText();
    expect(Number(shown.replace(" CNY", ""))).toBe(balance);
    expect(balance).toBeLessThan(1000);
    await page
      .getByRole("table", { name: /Bill records/ })
      .getByRole("row", { name: /instance_partial_hour/ })
      .waitFor();
    await screenshot("account");
  });

  it("makes drift that preview --refresh of the program shows: the new title and the stopped instance", async () => {
    const preview = await stack.preview({ refresh: true });
    const step = (name: string) => preview.steps.find((s: Step) => s.name === name);
    expect(step("fleet-0")?.op).toBe("update");
    expect(step("fleet-0")?.changes).toContainEqual(
      expect.objectContaining({ name: "title", old: "renamed-in-browser", new: "fleet-0" }),
    );
    expect(step("fleet-1")?.op).toBe("update");
    expect(step("fleet-1")?.changes).toContainEqual(
      expect.objectContaining({ name: "running", old: false, new: true }),
    );
  });

  it("renders a title holding markup as text", async () => {
    const title = "<img src=x onerror=window.__pwned=1>";
    await t.api("POST", "/instance/update_title", { body: { instance_uuid: uuidOf["fleet-0"], title } });
    await page.goto(`${t.url}/`);
    await row("fleet-1").waitFor();
    await page.getByRole("link", { name: title, exact: true }).click();
    await expect(page.getByLabel("Title").inputValue()).resolves.toBe(title);
    expect(await page.locator("main img").count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
  });

  it("resets the emulator after asking", async () => {
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Reset emulator" }).click();
    await said("The emulator is back to its seed");
    expect((await t.api("GET", "/instance/list")).body.data.total).toBe(0);
  });
});

/**
 * What a page of another site does: a no-cors fetch resetting the emulator, then forms (into frames, as
 * a page would hide them) disabling the demo key and advancing the clock through the console; the page's
 * title says when every answer has arrived. The script stands in the body, so the body it appends to
 * exists whenever its first answer comes (one CI run saw the fetch answered before the parser made it).
 */
const ATTACK_PAGE = `<!doctype html><title>attacking</title><body><script>
const target = new URLSearchParams(location.search).get("target");
function post(path, fields) {
  return new Promise((resolve) => {
    const frame = document.createElement("iframe");
    frame.name = "frame" + Math.random().toString(36).slice(2);
    document.body.append(frame);
    frame.addEventListener("load", resolve);
    const form = document.createElement("form");
    form.method = "post";
    form.action = target + path;
    form.target = frame.name;
    for (const [name, value] of Object.entries(fields)) {
      const input = document.createElement("input");
      input.type = "hidden";
      input.name = name;
      input.value = value;
      form.append(input);
    }
    document.body.append(form);
    form.submit();
  });
}
(async () => {
  await fetch(target + "/_emulator/reset", { method: "POST", mode: "no-cors" }).catch(() => undefined);
  await post("/_emulator/keys/${DEMO_KEY}/disable", {});
  await post("/console/actions/advance", { seconds: "3600" });
  document.title = "done";
})();
</script>`;

describe("pages of other sites, in the same browser", () => {
  let attacker: Server;
  let attackerPort: number;
  beforeAll(async () => {
    attacker = createServer((_request, response) =>
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(ATTACK_PAGE),
    );
    await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
    attackerPort = (attacker.address() as AddressInfo).port;
    refusalsWanted = true;
  });
  afterAll(async () => {
    refusalsWanted = false;
    await new Promise<void>((resolve) => attacker.close(() => resolve()));
  });

  it.each([
    ["another port of the emulator's host (same-site)", "127.0.0.1"],
    ["another site", "localhost"],
  ])("cannot reset the emulator, disable a key or act in the console from %s", async (_from, host) => {
    const { instance_uuid } = await createInstance(t);
    const before = await t.now();
    const answered: number[] = [];
    const fromEmulator = (response: { url(): string; status(): number }) => {
      if (response.url().startsWith(t.url)) answered.push(response.status());
    };
    page.on("response", fromEmulator);
    try {
      await page.goto(`http://${host}:${attackerPort}/?target=${encodeURIComponent(t.url)}`);
      await page.waitForFunction('document.title === "done"');
    } finally {
      page.off("response", fromEmulator);
    }
    // The emulator itself refused all three: the browser sent them, it did not block them.
    expect(answered).toEqual([403, 403, 403]);
    expect((await instanceInfo(t, instance_uuid)).body.code).toBe(0);
    expect((await t.api("GET", "/balance/info")).body.code).toBe(0);
    expect(await t.now()).toBe(before);
  });

  it("cannot read the snapshot or the console through a name of its own that resolves to the emulator", async () => {
    for (const path of ["/_emulator/snapshot", "/"]) {
      const response = await page.goto(`http://${REBOUND_NAME}:${t.running.port}${path}`);
      expect(response?.status()).toBe(421);
      const text = await page.locator("body").innerText();
      expect(text).toContain(`--allowed-host ${REBOUND_NAME}`);
      expect(text).not.toContain(DEMO_KEY);
    }
  });
});
