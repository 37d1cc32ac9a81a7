/**
 * The README's recipes, followed as written (see recipe.ts): "Copying an example" and "Testing your program"
 * in a project built from `npm pack` outside the repository, and the drift recipe of "Against the emulator".
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { installPackageInto } from "../../dev/installed";
import { ensurePackageLink, REPO_ROOT } from "../../dev/self-link";
import type { OperationResult } from "../../testing";
import { compiledExample } from "./helpers";
import { codeBlocks, readmeSection } from "./readme";
import { Recipe } from "./recipe";

/** Each step as "name op changed-properties", sorted. */
function plan(result: OperationResult | undefined): string[] {
  return (result?.steps ?? []).map((s) => [s.name, s.op, ...s.changes.map((c) => c.name)].join(" ")).sort();
}

describe("README: Copying an example, then Testing your program", () => {
  const copying = readmeSection("Copying an example");
  const testing = readmeSection("Testing your program");
  let dir: string;
  let recipe: Recipe;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "readme-copy-"));
    // The recipe starts at the repository root; here a stand-in whose examples are the repository's own.
    fs.mkdirSync(path.join(dir, "repository"));
    fs.symlinkSync(path.join(REPO_ROOT, "examples"), path.join(dir, "repository", "examples"));
    recipe = new Recipe({
      program: path.join(dir, "my-fleet", "bin", "index.js"),
      project: "gpucloud-fleet",
      workDir: path.join(dir, "repository"),
      install: (projectDir) => installPackageInto(projectDir),
    });
  });
  afterAll(async () => {
    await recipe.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("copies the fleet example out, installs the package from its tarball, and compiles it as Pulumi's template does", async () => {
    const [block] = codeBlocks(copying, "sh");
    await recipe.run(block);
    const project = path.join(dir, "my-fleet");
    const manifest = JSON.parse(fs.readFileSync(path.join(project, "package.json"), "utf8"));
    expect(manifest.dependencies["pulumi-gpucloud"]).toMatch(/^\^\d+\.\d+\.\d+$/);
    expect(fs.lstatSync(path.join(project, "node_modules", "pulumi-gpucloud")).isSymbolicLink()).toBe(false);
    const tsconfig = JSON.parse(fs.readFileSync(path.join(project, "tsconfig.json"), "utf8"));
    expect(tsconfig.compilerOptions).toMatchObject({
      strict: true,
      module: "commonjs",
      moduleResolution: "node",
    });
    expect(tsconfig.compilerOptions.skipLibCheck).toBeUndefined();
    expect(fs.existsSync(path.join(project, "bin", "index.js"))).toBe(true);
  }, 120_000);

  it("runs the README's test of the program with Node's test runner against the emulator", async () => {
    const [test] = codeBlocks(testing, "ts");
    fs.writeFileSync(path.join(dir, "my-fleet", "fleet.test.ts"), test);
    const [commands] = codeBlocks(testing, "sh");
    await recipe.run(commands);
    expect(fs.existsSync(path.join(dir, "my-fleet", "bin", "fleet.test.js"))).toBe(true);
  }, 120_000);
});

describe("README: Against the emulator, the drift recipe", () => {
  const [start, setUp, drift] = codeBlocks(readmeSection("Against the emulator"), "sh");
  let dir: string;
  let recipe: Recipe;

  beforeAll(() => {
    ensurePackageLink();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "readme-drift-"));
    // The recipe runs from the repository root, whose Pulumi.yaml runs examples/fleet.
    recipe = new Recipe({ program: compiledExample("fleet"), project: "gpucloud-fleet", workDir: dir });
  });
  afterAll(async () => {
    await recipe.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("brings up the fleet of stack config", async () => {
    await recipe.run(start);
    await recipe.run(setUp);
    const up = recipe.ran.find((r) => r.command === "pulumi up")!.result;
    expect(plan(up)).toEqual(
      ["fleet-0", "fleet-1", "fleet-2"].flatMap((n) => [`${n} create`, `${n}-idle create`]).sort(),
    );
  });

  it("shows exactly the one instance that went idle as stopped, starts it again, and destroys the fleet", async () => {
    await recipe.run(drift);
    const result = (command: string) => recipe.ran.find((r) => r.command.startsWith(command))?.result;
    const stopped = plan(result("pulumi preview --refresh")).filter((step) => !/ same$/.test(step));
    expect(stopped).toHaveLength(1);
    expect(stopped[0]).toMatch(/^fleet-\d update running$/);
    const name = stopped[0].split(" ")[0];
    const repair = plan(recipe.ran.filter((r) => r.command.startsWith("pulumi up")).at(-1)!.result);
    expect(repair.filter((step) => !/ same$/.test(step))).toEqual([`${name} update running`]);
    expect(plan(result("pulumi destroy")).every((step) => / delete$/.test(step))).toBe(true);
    expect(recipe.current.current.resources).toEqual([]);
  });
});
