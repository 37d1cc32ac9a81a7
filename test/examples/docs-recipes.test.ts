/**
 * The documentation's recipes, followed as written (see recipe.ts), in folders outside the repository
 * with this package installed from `npm pack`'s tarball (nothing downloaded: the install-*.e2e.test.ts suites make the
 * same installs with npm itself, in `npm run test:e2e`):
 * - the README's "Your own project": a program and its test from an empty folder, then the program under
 *   the CLI recipe;
 * - "Copying an example" (docs/using-the-cli.md), then the test template of docs/testing.md, which ends
 *   with a failure, never a hang, when the program cannot load or a wait never ends;
 * - the drift recipe of "Against the emulator" (docs/using-the-cli.md).
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as ts from "typescript";
import { installPackageInto } from "../../dev/installed";
import { ensurePackageLink, REPO_ROOT } from "../../dev/self-link";
import type { OperationResult } from "../../testing";
import { codeBlocks, docSection, savedAs } from "./docs";
import { compiledExample } from "./helpers";
import { commands, Recipe } from "./recipe";
import { nodeTestSummary } from "../support/node-test-summary";

/**
 * A guard against hangs, not a timing assertion: an install from the tarball, a strict compile against
 * @pulumi/pulumi's types and a run take a minute alone, and several on a 2-core machine shared with
 * other suites.
 */
jest.setTimeout(300_000);

/** Each step as "name op changed-properties", sorted. */
function plan(result: OperationResult | undefined): string[] {
  return (result?.steps ?? []).map((s) => [s.name, s.op, ...s.changes.map((c) => c.name)].join(" ")).sort();
}

/** What `npm install` does in these recipes: this package from `npm pack`, once per project. */
async function installOnce(dir: string): Promise<void> {
  if (fs.existsSync(path.join(dir, "node_modules", "pulumi-gpucloud"))) return;
  await installPackageInto(dir);
}

/** Writes each TypeScript block of `section` to the file the text says to save it as, in `dir`. */
function saveBlocks(section: string, dir: string): string[] {
  return codeBlocks(section, "ts").map((block) => {
    const name = savedAs(section, block);
    fs.writeFileSync(path.join(dir, name), block);
    return name;
  });
}

const VERSION = (
  JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { version: string }
).version;

describe("README: Your own project", () => {
  const section = docSection("README.md", "Your own project");
  const [setUp, build, emulator, cli] = codeBlocks(section, "sh");
  let dir: string;
  let project: string;
  let recipe: Recipe;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "readme-own-"));
    project = path.join(dir, "my-gpus");
    recipe = new Recipe({
      program: path.join(project, "bin", "index.js"),
      project: "my-gpus",
      workDir: dir,
      install: installOnce,
    });
  });
  afterAll(async () => {
    await recipe.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("makes a project in an empty folder whose own test of its program passes against the emulator", async () => {
    await recipe.run(setUp);
    expect(saveBlocks(section, project)).toEqual(["index.ts", "index.test.ts"]);
    await recipe.run(build);
    const test = recipe.ran.find((r) => r.command.startsWith("node --test"));
    expect(nodeTestSummary(test?.output ?? "")).toMatchObject({ pass: 1, fail: 0 });
  });

  it("runs the same program with the CLI recipe against an emulator of its own", async () => {
    await recipe.run(emulator);
    await recipe.run(cli);
    const pulumiYaml = fs.readFileSync(path.join(project, "Pulumi.yaml"), "utf8");
    // The CLI runs what Pulumi.yaml names: the program the test ran.
    expect(pulumiYaml).toMatch(/^main: bin\/index\.js$/m);
    const up = recipe.ran.find((r) => r.command === "pulumi up")!.result;
    expect(plan(up)).toEqual(["box create", "box-idle create"]);
  });
});

/**
 * `node --test` as the text writes it, in `cwd`, with the words `without` left out; a run that outlives
 * two minutes is killed, which the caller sees as `ended: false`.
 */
function nodeTest(
  line: string,
  cwd: string,
  without: string[] = [],
): Promise<{ ended: boolean; code: number; output: string }> {
  const [, ...args] = line.split(/\s+/).filter((word) => !without.includes(word));
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { cwd, timeout: 120_000, killSignal: "SIGKILL", encoding: "utf8" },
      (err, stdout, stderr) =>
        resolve({
          ended: !err?.signal,
          code: err ? Number(err.code ?? -1) : 0,
          output: `${stdout}${stderr}`,
        }),
    );
  });
}

describe("docs/using-the-cli.md: Copying an example, then docs/testing.md: The test template", () => {
  const copying = docSection("docs/using-the-cli.md", "Copying an example");
  const template = docSection("docs/testing.md", "The test template");
  const [runTemplate] = codeBlocks(template, "sh");
  const testLine = commands(runTemplate).find((line) => line.startsWith("node --test"))!;
  let dir: string;
  let project: string;
  let recipe: Recipe;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "docs-copy-"));
    project = path.join(dir, "my-fleet");
    // The recipe starts at the repository root; here a stand-in whose examples are the repository's own.
    fs.mkdirSync(path.join(dir, "repository"));
    fs.symlinkSync(path.join(REPO_ROOT, "examples"), path.join(dir, "repository", "examples"));
    recipe = new Recipe({
      program: path.join(project, "bin", "index.js"),
      project: "gpucloud-fleet",
      workDir: path.join(dir, "repository"),
      install: installOnce,
    });
  });
  afterAll(async () => {
    await recipe.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("has examples that name the package by its version, so that npm install finds it outside the repository", () => {
    for (const example of ["fleet", "from-image"]) {
      const manifest = JSON.parse(
        fs.readFileSync(path.join(REPO_ROOT, "examples", example, "package.json"), "utf8"),
      );
      expect({ example, dependency: manifest.dependencies["pulumi-gpucloud"] }).toEqual({
        example,
        dependency: `^${VERSION}`,
      });
    }
  });

  it("copies the fleet example out, installs it, and compiles it as Pulumi's template does", async () => {
    const [afterPublication] = codeBlocks(copying, "sh");
    await recipe.run(afterPublication);
    expect(fs.lstatSync(path.join(project, "node_modules", "pulumi-gpucloud")).isSymbolicLink()).toBe(false);
    const tsconfig = JSON.parse(fs.readFileSync(path.join(project, "tsconfig.json"), "utf8"));
    expect(tsconfig.compilerOptions.strict).toBe(true);
    expect(tsconfig.compilerOptions.skipLibCheck).toBeUndefined();
    expect(fs.existsSync(path.join(project, "bin", "index.js"))).toBe(true);
  });

  it("runs the test template with Node's test runner against the emulator", async () => {
    expect(saveBlocks(template, project)).toEqual(["fleet.test.ts"]);
    await recipe.run(runTemplate);
    const test = recipe.ran.find((r) => r.command.startsWith("node --test"));
    expect(nodeTestSummary(test?.output ?? "")).toMatchObject({ pass: 1, fail: 0 });
  });

  /** The compiled template beside a program of `source` in a folder of its own, so the real one stays. */
  function templateWith(folder: string, source: string, compiledTest = "fleet.test.js"): string {
    const cwd = path.join(project, folder);
    fs.mkdirSync(path.join(cwd, "bin"), { recursive: true });
    fs.copyFileSync(path.join(project, "bin", compiledTest), path.join(cwd, "bin", "fleet.test.js"));
    fs.writeFileSync(path.join(cwd, "bin", "index.js"), source);
    return cwd;
  }

  it.each([
    ["as written", [] as string[]],
    ["without --test-force-exit (the try alone ends it)", ["--test-force-exit"]],
  ])("ends with a failure, not a hang, when the stack cannot open: %s", async (_how, without) => {
    const cwd = templateWith("unloadable", "module.exports = { notAProgram: true };\n");
    const run = await nodeTest(testLine, cwd, without);
    expect(run.ended).toBe(true);
    expect(run.code).toBe(1);
    expect(run.output).toContain("exports no function");
    expect(nodeTestSummary(run.output)).toMatchObject({ fail: 1 });
  });

  it("ends with a failure, not a hang, when a wait never ends: the test's timeout, then --test-force-exit", async () => {
    // The template's own timeout, made short: the same test, failing sooner.
    const [test] = codeBlocks(template, "ts");
    expect(test).toContain("{ timeout: 5 * 60_000 }");
    // Type-checked as written by the test above; this variant only needs its JavaScript.
    const short = ts.transpileModule(test.replace("5 * 60_000", "3_000"), {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2020 },
    });
    fs.writeFileSync(path.join(project, "bin", "short.test.js"), short.outputText);
    const cwd = templateWith("endless", "module.exports = () => new Promise(() => {});\n", "short.test.js");
    const run = await nodeTest(testLine, cwd);
    expect(run.ended).toBe(true);
    expect(run.code).toBe(1);
    expect(run.output).toContain("test timed out after 3000ms");
  });
});

describe("docs/using-the-cli.md: Against the emulator, the drift recipe", () => {
  const [start, setUp, drift] = codeBlocks(docSection("docs/using-the-cli.md", "Against the emulator"), "sh");
  let dir: string;
  let recipe: Recipe;

  beforeAll(() => {
    ensurePackageLink();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "docs-drift-"));
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
