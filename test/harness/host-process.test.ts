/**
 * The engine inside a user's process (a test runner), in a plain Node process with Node's default policy:
 * every failure of a program is a rejected operation, never a crash of the host (here a data source that
 * fails after the deployment already stopped on another failure), and no provider process outlives its
 * host, even one killed with SIGKILL.
 */
import { execFile, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as readline from "node:readline";
import { promisify } from "node:util";
import { assertBuilt, REPO_ROOT } from "../../dev/self-link";
import { WITHOUT_FFI } from "../support/node-flags";

const run = promisify(execFile);

/**
 * A program whose first resource fails its check at once while a data source is still under way; the data
 * source fails when the host says so (after the operation has stopped), so the order never depends on timing.
 */
const PROGRAM = `
const pulumi = require("@pulumi/pulumi");
const provider = {
  async check(_olds, news) {
    return { inputs: news, failures: news.size > 2 ? [{ property: "size", reason: "size must be at most 2" }] : [] };
  },
  async create(inputs) {
    return { id: "box", outs: inputs };
  },
};
class Box extends pulumi.dynamic.Resource {
  constructor(name, args) {
    super(provider, name, args, {}, "fixture", "Box");
  }
}
function slowDataSource() {
  return new Promise((_, reject) => {
    globalThis.failDataSource = () => reject(new Error("the catalogue could not be read"));
  });
}
module.exports = async () => {
  new Box("too-big", { size: 3 });
  const label = pulumi.output(slowDataSource());
  new Box("labelled", { size: 1, label });
  return { label };
};
`;

/** Runs up, lets the data source fail after up was rejected, then closes: what a user's test might do. */
const HOST = `
const { Stack } = require(${JSON.stringify(path.join(REPO_ROOT, "dist", "testing"))});
(async () => {
  const stack = await Stack.open({ program: process.argv[2], project: "boxes", stack: "test" });
  try {
    await stack.up();
    console.log("up succeeded");
  } catch (err) {
    console.log("up rejected: " + err.message);
  }
  globalThis.failDataSource();
  // Rejections are reported after the microtask queue drains: give the failure a few turns to surface.
  for (let turn = 0; turn < 10; turn++) await new Promise((resolve) => setImmediate(resolve));
  await stack.close();
  console.log("host still running");
})();
`;

/** A program written for the CLI's old style, all top-level code: a data source and a resource. */
const TOP_LEVEL_PROGRAM = `
const gpucloud = require("pulumi-gpucloud");
const gpu = gpucloud.getGpuOutput({ name: "4090D" });
new gpucloud.Instance("worker", { podUuid: "pod", gpuUuid: gpu.gpuUuid, gpuNums: 1 });
exports.gpu = gpu.gpuUuid;
`;

/** The same data source at the top level of a program that does export its function. */
const FUNCTION_AND_TOP_LEVEL_PROGRAM = `
const gpucloud = require("pulumi-gpucloud");
gpucloud.getGpuOutput({ name: "4090D" });
module.exports = async () => ({});
`;

/** Opens a stack of the program argv[2] with the stack config argv[3] and no environment; says how it went. */
const OPENING_HOST = `
const { Stack } = require(${JSON.stringify(path.join(REPO_ROOT, "dist", "testing"))});
(async () => {
  const config = JSON.parse(process.argv[3]);
  await Stack.open({ program: process.argv[2], project: "boxes", stack: "test", config, env: {} }).then(
    (stack) => { console.log("opened"); return stack.close(); },
    (err) => console.log("open rejected: " + err.message),
  );
  for (let turn = 0; turn < 10; turn++) await new Promise((resolve) => setImmediate(resolve));
  console.log("host still running");
})();
`;

/** Opens a stack, says so, and waits to be killed. */
const WAITING_HOST = `
const { Stack } = require(${JSON.stringify(path.join(REPO_ROOT, "dist", "testing"))});
Stack.open({ program: process.argv[2], project: "boxes", stack: "test" }).then(() => {
  console.log("open");
  setInterval(() => undefined, 1000);
});
`;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls until `done` holds, failing after `seconds` (a bound for a loaded machine, not a timing claim). */
async function eventually(done: () => boolean, seconds: number): Promise<boolean> {
  const deadline = Date.now() + seconds * 1000;
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  return done();
}

describe("the engine in a host process", () => {
  let dir: string;

  beforeAll(() => {
    assertBuilt();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "late-failure-"));
    fs.mkdirSync(path.join(dir, "node_modules", "@pulumi"), { recursive: true });
    fs.symlinkSync(
      path.join(REPO_ROOT, "node_modules", "@pulumi", "pulumi"),
      path.join(dir, "node_modules", "@pulumi", "pulumi"),
    );
    fs.writeFileSync(path.join(dir, "program.js"), PROGRAM);
    fs.writeFileSync(path.join(dir, "host.js"), HOST);
    fs.writeFileSync(path.join(dir, "waiting-host.js"), WAITING_HOST);
    fs.symlinkSync(REPO_ROOT, path.join(dir, "node_modules", "pulumi-gpucloud"));
    fs.writeFileSync(path.join(dir, "top-level.js"), TOP_LEVEL_PROGRAM);
    fs.writeFileSync(path.join(dir, "function-and-top-level.js"), FUNCTION_AND_TOP_LEVEL_PROGRAM);
    fs.writeFileSync(path.join(dir, "opening-host.js"), OPENING_HOST);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("rejects the operation with the first failure and leaves the host process running", async () => {
    // Nothing on stderr: the harness's failures reach the host as rejections, never as printed noise.
    const { stdout, stderr } = await run(
      process.execPath,
      [...WITHOUT_FFI, "host.js", path.join(dir, "program.js")],
      { cwd: dir },
    );
    expect(stdout).toBe(
      "up rejected: up failed: too-big (fixture:Box) failed its check: size: size must be at most 2\n" +
        "host still running\n",
    );
    expect(stderr).toBe("");
  });

  it("leaves no provider process behind when the host is killed with SIGKILL", async () => {
    const host = spawn(process.execPath, ["waiting-host.js", path.join(dir, "program.js")], {
      cwd: dir,
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = new Promise((resolve) => host.once("exit", resolve));
    try {
      await new Promise((resolve) => readline.createInterface({ input: host.stdout! }).once("line", resolve));
      const { stdout } = await run("ps", ["-o", "pid=", "--ppid", String(host.pid)]);
      const servers = stdout
        .split("\n")
        .map((l) => Number(l.trim()))
        .filter((pid) => pid > 0);
      expect(servers).toHaveLength(1);
      host.kill("SIGKILL");
      await exited;
      expect(await eventually(() => !alive(servers[0]), 30)).toBe(true);
    } finally {
      host.kill("SIGKILL");
    }
  });

  it("rejects Stack.open of a program that cannot be loaded, naming it", async () => {
    const { Stack } = await import("../../testing");
    const missing = path.join(dir, "missing.js");
    const opening = Stack.open({ program: missing, project: "boxes", stack: "test" });
    await expect(opening).rejects.toThrow(`Could not load the program ${missing}: `);
    await expect(opening).rejects.toThrow("Cannot find module");
  });

  describe("a program whose top-level code calls a data source", () => {
    const open = (program: string, config: Record<string, string>) =>
      run(process.execPath, [
        path.join(dir, "opening-host.js"),
        path.join(dir, program),
        JSON.stringify(config),
      ]);

    it("is refused for exporting no function once that code's failure is in, and the host keeps running", async () => {
      const { stdout, stderr } = await open("top-level.js", {});
      expect(stdout).toContain(
        `open rejected: The program ${path.join(dir, "top-level.js")} exports no function.`,
      );
      expect(stdout).toContain("host still running");
      expect(stderr).not.toContain("base URL is not set");
    });

    it("reads the stack's config, and its failure rejects Stack.open", async () => {
      const { stdout } = await open("function-and-top-level.js", { "gpucloud:baseUrl": "not-a-url" });
      expect(stdout).toMatch(/open rejected: Could not load the program .*: .*gpucloud:baseUrl/);
      expect(stdout).toContain("host still running");
    });
  });

  // In a plain Node.js process, as users run their tests: jest's own require would compile the file.
  it("says to compile a TypeScript program and pass the .js file", async () => {
    const source = path.join(dir, "program.ts");
    fs.writeFileSync(source, "const count: number = 1;\nexport = async () => ({ count });\n");
    const testing = path.join(REPO_ROOT, "dist", "testing");
    const open = `require(${JSON.stringify(testing)}).Stack.open({ program: ${JSON.stringify(source)}, project: "boxes", stack: "test" })`;
    const { stdout } = await run(process.execPath, [
      "-e",
      `${open}.then(() => console.log("opened"), (e) => console.log(e.message))`,
    ]);
    expect(stdout).toContain(`Could not load the program ${source}: `);
    expect(stdout).toContain(
      "Node.js runs JavaScript only: compile the program first (npx tsc) and pass the compiled .js file.",
    );
  });
});
