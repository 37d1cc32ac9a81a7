/**
 * The plugin processes the harness starts (a dynamic-provider server, a policy pack) load
 * @pulumi/pulumi's package walker, @npmcli/arborist, only when something uses it: not at start, and
 * whole and working the first time `computeCodePaths`, its one user, runs.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { nodeExitingWithEngine } from "../../testing/plugin-process";

const run = promisify(execFile);

/** What the script saw: the package walker loaded at start, after `computeCodePaths`, and what that found. */
interface Seen {
  atStart: boolean;
  afterUse: boolean;
  codePaths: string[];
}

let dir: string;
let script: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "plugin-process-"));
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "p", dependencies: {} }));
  fs.writeFileSync(path.join(dir, "included.js"), "module.exports = 1;\n");
  script = path.join(dir, "script.js");
  fs.writeFileSync(
    script,
    `const pulumi = require(${JSON.stringify(require.resolve("@pulumi/pulumi"))});
const walkerLoaded = () => Object.keys(require.cache).some((f) => f.includes("@npmcli/arborist"));
const atStart = walkerLoaded();
pulumi.runtime.computeCodePaths({ extraIncludePaths: ["included.js"] }).then((paths) => {
  process.stdout.write(JSON.stringify({ atStart, afterUse: walkerLoaded(), codePaths: [...paths.keys()] }));
  process.exit(0);
});
`,
  );
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function seen(command: string, args: string[]): Promise<Seen> {
  const { stdout } = await run(command, args, { cwd: dir });
  return JSON.parse(stdout) as Seen;
}

describe("a plugin process the harness starts", () => {
  it("loads @pulumi/pulumi without its package walker, and loads it whole when computeCodePaths uses it", async () => {
    const { command, args } = nodeExitingWithEngine(script, []);
    expect(await seen(command, args)).toEqual({ atStart: false, afterUse: true, codePaths: ["included.js"] });
  });

  it("differs from node running the script alone only there: @pulumi/pulumi loads the walker at once", async () => {
    expect(await seen(process.execPath, [script])).toEqual({
      atStart: true,
      afterUse: true,
      codePaths: ["included.js"],
    });
  });
});
