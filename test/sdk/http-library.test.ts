/**
 * The SDK loads its HTTP library, undici, at its first connection, not when it loads (sdk/http-library.ts):
 * a provider answering a preview's Check and Diff never calls the cloud, and each `pulumi preview` starts
 * the provider afresh. Checked in a process of its own, on the built package, as a provider runs.
 */
import { execFile } from "node:child_process";
import * as path from "node:path";
import { promisify } from "node:util";
import { assertBuilt, REPO_ROOT } from "../../dev/self-link";
import { DEMO_KEY, startTestEmulator, type TestEmulator } from "../emulator/helpers";

const run = promisify(execFile);

let t: TestEmulator;
beforeAll(async () => {
  assertBuilt();
  t = await startTestEmulator({ apiKeys: [DEMO_KEY] });
});
afterAll(() => t?.close());

const SCRIPT = `
const undiciLoaded = () => Object.keys(require.cache).some((f) => /[\\\\/]node_modules[\\\\/]undici[\\\\/]/.test(f));
const dist = process.argv[1];
require(dist + "/provider/native/server.js");
require(dist + "/provider/dynamic.js");
const { GpuCloudClient } = require(dist + "/sdk/index.js");
const atLoad = undiciLoaded();
const client = new GpuCloudClient({ baseUrl: process.argv[2], apiKey: process.argv[3] });
client.instances.list().then(async (listed) => {
  process.stdout.write(JSON.stringify({ atLoad, afterCall: undiciLoaded(), total: listed.total }));
  await client.close();
});
`;

it("is not loaded by the SDK, the native server or the dynamic provider; the first call loads it and works", async () => {
  const { stdout } = await run(process.execPath, [
    "-e",
    SCRIPT,
    path.join(REPO_ROOT, "dist"),
    t.url,
    DEMO_KEY,
  ]);
  expect(JSON.parse(stdout)).toEqual({ atLoad: false, afterCall: true, total: 0 });
});
