/**
 * What the install suites (*.e2e.test.ts in this folder) share: each follows install instructions of the
 * documentation exactly, with npm itself, in folders outside the repository (see recipe.ts). Until the
 * package is published, a stand-in registry (dev/registry-stand-in.ts) serves it from `npm pack`'s
 * tarball and sends every other package on to the real registry. They download, so they run in
 * `npm run test:e2e`, not in `npm test`; one file per install, so jest runs them side by side: each waits
 * mostly on the registry.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { configuredRegistry, startRegistryStandIn, type RegistryStandIn } from "../../dev/registry-stand-in";
import { packTarball } from "../../dev/installed";
import { assertBuilt, REPO_ROOT } from "../../dev/self-link";
import { Recipe } from "./recipe";

const run = promisify(execFile);

/** A test file's scratch folder and registry stand-in, made before its tests and removed after them. */
export interface InstallWorld {
  scratch(): string;
  /** The stand-in, unless the file installs without one. */
  registry(): RegistryStandIn;
  /** Each recipe made here is closed after the file's tests. */
  keep(recipe: Recipe): Recipe;
}

export function installWorld({ standIn = true } = {}): InstallWorld {
  let scratch: string;
  let registry: RegistryStandIn | undefined;
  const recipes: Recipe[] = [];
  beforeAll(async () => {
    assertBuilt();
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), "install-e2e-"));
    if (standIn)
      registry = await startRegistryStandIn(await packTarball(scratch), await configuredRegistry());
  });
  afterAll(async () => {
    await Promise.all(recipes.map((r) => r.close()));
    await registry?.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  });
  return {
    scratch: () => scratch,
    registry: () => {
      if (!registry) throw new Error("This file installs without the registry stand-in (installWorld).");
      return registry;
    },
    keep: (recipe) => (recipes.push(recipe), recipe),
  };
}

/** npm itself, as a user runs it, against `registryUrl`. */
export function npm(registryUrl: () => string) {
  return async (dir: string, args: string[]) => {
    await run("npm", ["install", ...args], {
      cwd: dir,
      env: { ...process.env, npm_config_registry: registryUrl() },
      maxBuffer: 16 * 1024 * 1024,
    });
  };
}

/** `npm pack --pack-destination DIR` in the stand-in for the repository: this repository packed there. */
export async function packRepository(dir: string, args: string[]): Promise<void> {
  await packTarball(path.resolve(dir, args[args.indexOf("--pack-destination") + 1]));
}

/** A folder in `scratch` with a stand-in for the repository whose examples are its own. */
export function repositoryStandIn(scratch: string, name: string): string {
  const dir = path.join(scratch, name);
  fs.mkdirSync(path.join(dir, "repository"), { recursive: true });
  fs.symlinkSync(path.join(REPO_ROOT, "examples"), path.join(dir, "repository", "examples"));
  return dir;
}

/** The package as npm installed it in `project`: a folder of its own (not a link), of this version. */
export function installedPackage(project: string): { link: boolean; version: string } {
  const dir = path.join(project, "node_modules", "pulumi-gpucloud");
  return {
    link: fs.lstatSync(dir).isSymbolicLink(),
    version: (JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as { version: string })
      .version,
  };
}

/** docs/using-the-cli.md's "Copying an example" recipe, in `dir` (a repository stand-in), installing with `registryUrl`. */
export function copyingRecipe(dir: string, registryUrl: () => string): Recipe {
  return new Recipe({
    program: path.join(dir, "my-fleet", "bin", "index.js"),
    project: "gpucloud-fleet",
    workDir: path.join(dir, "repository"),
    install: npm(registryUrl),
    pack: packRepository,
    typescript: "project",
  });
}
