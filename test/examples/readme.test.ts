/**
 * The README's recipes, followed as written (see recipe.ts): "Copying an example" and "Testing your program"
 * in a project built from `npm pack` outside the repository, and the drift recipe of "Against the emulator".
 * Every TypeScript snippet of the README is type-checked in that project, against the installed package.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { installPackageInto } from "../../dev/installed";
import { ensurePackageLink, REPO_ROOT } from "../../dev/self-link";
import type { OperationResult } from "../../testing";
import { compiledExample } from "./helpers";
import { codeBlocks, README, readmeSection, snippetModule } from "./readme";
import { Recipe } from "./recipe";

const run = promisify(execFile);

/** What tsc says of the project at `dir` (its errors; empty when it compiles). */
async function typeCheck(dir: string): Promise<string> {
  const tsc = path.join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");
  try {
    await run(process.execPath, [tsc, "-p", dir, "--pretty", "false"], { cwd: dir });
    return "";
  } catch (err) {
    return (err as { stdout?: string }).stdout || (err as Error).message;
  }
}

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
      module: "node16",
      moduleResolution: "node16",
    });
    expect(tsconfig.compilerOptions.skipLibCheck).toBeUndefined();
    expect(fs.existsSync(path.join(project, "bin", "index.js"))).toBe(true);
  }, 120_000);

  it("type-checks every TypeScript snippet of the README against the installed package", async () => {
    const project = path.join(dir, "my-fleet");
    const snippets = path.join(project, "readme-snippets");
    fs.mkdirSync(snippets);
    const blocks = codeBlocks(README, "ts");
    blocks.forEach((block, i) =>
      fs.writeFileSync(path.join(snippets, `snippet-${i + 1}.ts`), snippetModule(block)),
    );
    // The project's own settings (Pulumi's template: strict, no skipLibCheck), on the snippets alone.
    fs.writeFileSync(
      path.join(snippets, "tsconfig.json"),
      JSON.stringify({ extends: "../tsconfig.json", compilerOptions: { noEmit: true }, include: ["*.ts"] }),
    );
    // Gone afterwards: the recipe that follows compiles the whole project.
    const checked = await typeCheck(snippets).finally(() => fs.rmSync(snippets, { recursive: true }));
    expect(checked).toBe("");
    expect(blocks.length).toBeGreaterThanOrEqual(8);
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
