/**
 * What `npm run test:e2e` counts as an engine warning to fail on (dev/node-releases.ts), read from a real
 * `npm install` of two local packages whose engines refuse this Node.js: one named like the dependency
 * troubleshooting explains on Node.js 20 (cookie), one that nothing explains.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { unexplainedEngineWarnings } from "../../dev/node-releases";

const run = promisify(execFile);

/** A package of `name` and `version` that no Node.js satisfies, packed in `dir`; returns its tarball. */
async function refusingPackage(dir: string, name: string, version: string): Promise<string> {
  const folder = path.join(dir, name);
  fs.mkdirSync(folder);
  fs.writeFileSync(
    path.join(folder, "package.json"),
    JSON.stringify({ name, version, engines: { node: "<1" } }),
  );
  await run("npm", ["pack", "--silent"], { cwd: folder });
  return path.join(folder, `${name}-${version}.tgz`);
}

describe("engine warnings of an install", () => {
  let dir: string;
  let output: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "engine-warnings-"));
    const cookie = await refusingPackage(dir, "cookie", "2.0.2");
    const other = await refusingPackage(dir, "other", "1.0.0");
    const project = path.join(dir, "project");
    fs.mkdirSync(project);
    fs.writeFileSync(
      path.join(project, "package.json"),
      JSON.stringify({
        name: "project",
        version: "1.0.0",
        dependencies: { cookie: `file:${cookie}`, other: `file:${other}` },
      }),
    );
    const { stdout, stderr } = await run("npm", ["install", "--offline", "--no-audit", "--no-fund"], {
      cwd: project,
    });
    output = `${stdout}${stderr}`;
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("leaves out only cookie's on Node.js 20, where troubleshooting explains it", () => {
    expect(unexplainedEngineWarnings(output, 20)).toEqual(["other@1.0.0"]);
  });

  it("counts cookie's from Node.js 22 on, where nothing should warn", () => {
    expect(unexplainedEngineWarnings(output, 24).sort()).toEqual(["cookie@2.0.2", "other@1.0.0"]);
  });

  it("finds none in an install without engine warnings", () => {
    expect(unexplainedEngineWarnings("added 2 packages in 1s\n", 26)).toEqual([]);
  });
});
