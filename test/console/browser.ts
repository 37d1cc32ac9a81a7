/**
 * Debian's Chromium driven by playwright-core, which never downloads a browser: the test uses the one
 * `apt-get install -y chromium` puts at /usr/bin/chromium, with a fresh profile every run.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
/** Long enough for a loaded 2-core machine, short enough that a stuck page fails well inside jest's timeout. */
const WAIT_MS = 60_000;

export interface Browser {
  page: Page;
  close(): Promise<void>;
}

/** `extraArgs`: more Chromium switches, e.g. `--host-resolver-rules` to point a made-up name at loopback. */
export async function openBrowser(extraArgs: readonly string[] = []): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(
      `The browser test needs Chromium at ${CHROMIUM}: install it with \`apt-get install -y chromium\`.`,
    );
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "gpucloud-console-chromium-"));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [...CHROMIUM_ARGS, ...extraArgs],
      timeout: WAIT_MS,
      viewport: { width: 1280, height: 800 },
    });
  } catch (err) {
    fs.rmSync(profile, { recursive: true, force: true });
    throw err;
  }
  context.setDefaultTimeout(WAIT_MS);
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    page,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}
