/**
 * The install instructions of the documentation, followed exactly, with npm itself, in folders outside
 * the repository (see recipe.ts):
 * - the README's "Your own project", from the npm registry;
 * - docs/using-the-cli.md's "Copying an example" from the npm registry, then docs/testing.md's template;
 * - the same before publication: `npm pack` in the repository, then `npm install` of the tarball.
 * Until the package is published, a stand-in registry (dev/registry-stand-in.ts) serves it from
 * `npm pack`'s tarball and sends every other package on to the real registry. It downloads, so it runs
 * in `npm run test:e2e`, not in `npm test`.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { configuredRegistry, startRegistryStandIn, type RegistryStandIn } from "../../dev/registry-stand-in";
import { packTarball } from "../../dev/installed";
import { assertBuilt, REPO_ROOT } from "../../dev/self-link";
import { codeBlocks, docSection, savedAs } from "./docs";
import { Recipe } from "./recipe";
import { nodeTestSummary } from "../support/node-test-summary";

const run = promisify(execFile);

/** Several installs from the registry, on a loaded machine. */
jest.setTimeout(600_000);

let scratch: string;
let registry: RegistryStandIn;

beforeAll(async () => {
  assertBuilt();
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "install-e2e-"));
  registry = await startRegistryStandIn(await packTarball(scratch), await configuredRegistry());
});
afterAll(async () => {
  await registry?.close();
  fs.rmSync(scratch, { recursive: true, force: true });
});

/** npm itself, as a user runs it, against `registryUrl`. */
function npm(registryUrl: () => string) {
  return async (dir: string, args: string[]) => {
    await run("npm", ["install", ...args], {
      cwd: dir,
      env: { ...process.env, npm_config_registry: registryUrl() },
      maxBuffer: 16 * 1024 * 1024,
    });
  };
}

/** `npm pack --pack-destination DIR` in the stand-in for the repository: this repository packed there. */
async function packRepository(dir: string, args: string[]): Promise<void> {
  await packTarball(path.resolve(dir, args[args.indexOf("--pack-destination") + 1]));
}

/** A folder outside the repository with a stand-in for the repository whose examples are its own. */
function repositoryStandIn(name: string): string {
  const dir = path.join(scratch, name);
  fs.mkdirSync(path.join(dir, "repository"), { recursive: true });
  fs.symlinkSync(path.join(REPO_ROOT, "examples"), path.join(dir, "repository", "examples"));
  return dir;
}

/** The package as npm installed it in `project`: a folder of its own (not a link), of this version. */
function installedPackage(project: string): { link: boolean; version: string } {
  const dir = path.join(project, "node_modules", "pulumi-gpucloud");
  return {
    link: fs.lstatSync(dir).isSymbolicLink(),
    version: (JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as { version: string })
      .version,
  };
}

describe("README: Your own project, installed from the npm registry", () => {
  const section = docSection("README.md", "Your own project");
  const [setUp, build] = codeBlocks(section, "sh");
  let recipe: Recipe;
  afterAll(() => recipe?.close());

  it("makes a project in an empty folder whose own test of its program passes", async () => {
    const dir = path.join(scratch, "own");
    fs.mkdirSync(dir);
    const project = path.join(dir, "my-gpus");
    recipe = new Recipe({
      program: path.join(project, "bin", "index.js"),
      project: "my-gpus",
      workDir: dir,
      install: npm(() => registry.url),
      typescript: "project",
    });
    await recipe.run(setUp);
    expect(installedPackage(project)).toEqual({ link: false, version: registry.version });
    for (const block of codeBlocks(section, "ts"))
      fs.writeFileSync(path.join(project, savedAs(section, block)), block);
    await recipe.run(build);
    const test = recipe.ran.find((r) => r.command.startsWith("node --test"));
    expect(nodeTestSummary(test?.output ?? "")).toMatchObject({ pass: 1, fail: 0 });
  });
});

describe("docs/using-the-cli.md: Copying an example", () => {
  const copying = docSection("docs/using-the-cli.md", "Copying an example");
  const [afterPublication, beforePublication] = codeBlocks(copying, "sh");
  const template = docSection("docs/testing.md", "The test template");
  const recipes: Recipe[] = [];
  afterAll(() => Promise.all(recipes.map((r) => r.close())));

  function recipeIn(dir: string, registryUrl: () => string): Recipe {
    const recipe = new Recipe({
      program: path.join(dir, "my-fleet", "bin", "index.js"),
      project: "gpucloud-fleet",
      workDir: path.join(dir, "repository"),
      install: npm(registryUrl),
      pack: packRepository,
      typescript: "project",
    });
    recipes.push(recipe);
    return recipe;
  }

  it("after publication: npm install takes the package from the registry, tsc compiles, the test template passes", async () => {
    const dir = repositoryStandIn("after");
    const recipe = recipeIn(dir, () => registry.url);
    await recipe.run(afterPublication);
    const project = path.join(dir, "my-fleet");
    expect(installedPackage(project)).toEqual({ link: false, version: registry.version });
    expect(fs.existsSync(path.join(project, "bin", "index.js"))).toBe(true);
    const [test] = codeBlocks(template, "ts");
    fs.writeFileSync(path.join(project, savedAs(template, test)), test);
    await recipe.run(codeBlocks(template, "sh")[0]);
    const run = recipe.ran.find((r) => r.command.startsWith("node --test"));
    expect(nodeTestSummary(run?.output ?? "")).toMatchObject({ pass: 1, fail: 0 });
  });

  it("before publication: npm pack in the repository, npm install of its tarball, tsc compiles", async () => {
    const dir = repositoryStandIn("before");
    // The real registry, which does not hold the package: the tarball alone must satisfy the project.
    const upstream = await configuredRegistry();
    const recipe = recipeIn(dir, () => upstream);
    await recipe.run(beforePublication);
    const project = path.join(dir, "my-fleet");
    expect(fs.readdirSync(dir).filter((f) => f.endsWith(".tgz"))).toEqual([
      `pulumi-gpucloud-${registry.version}.tgz`,
    ]);
    expect(installedPackage(project)).toEqual({ link: false, version: registry.version });
    const manifest = JSON.parse(fs.readFileSync(path.join(project, "package.json"), "utf8"));
    expect(manifest.dependencies["pulumi-gpucloud"]).toMatch(/^file:.*pulumi-gpucloud-\d+\.\d+\.\d+\.tgz$/);
    expect(fs.existsSync(path.join(project, "bin", "index.js"))).toBe(true);
  });
});
