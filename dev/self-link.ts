/**
 * This repository's own development setup, never part of the published package: the link through which
 * the examples, the demo and the tests reach the package by its name, and a check that dist/ is not older
 * than the sources that the serialized providers load from it.
 */
import * as fs from "node:fs";
import * as path from "node:path";

/** The repository root: found by walking up, so it is the same from dev/*.ts (jest) and dist/dev/*.js. */
function repositoryRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, "package.json");
    if (fs.existsSync(manifest) && JSON.parse(fs.readFileSync(manifest, "utf8")).name === "pulumi-gpucloud") {
      return dir;
    }
    if (path.dirname(dir) === dir) throw new Error(`no pulumi-gpucloud package.json above ${from}`);
  }
}

export const REPO_ROOT = repositoryRoot(__dirname);

/**
 * The linked package the dynamic-provider server resolves `require("pulumi-gpucloud/...")` against
 * (docs/design/pulumi-machinery.md#where-the-stored-provider-loads-from): `node_modules/pulumi-gpucloud -> ..`
 * at the repository root, made when absent.
 */
export function ensurePackageLink(root: string = REPO_ROOT): void {
  const link = path.join(root, "node_modules", "pulumi-gpucloud");
  try {
    const target = fs.readlinkSync(link);
    if (path.resolve(path.dirname(link), target) === root) return;
    fs.unlinkSync(link);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  try {
    fs.symlinkSync("..", link, "dir");
  } catch (err) {
    // Another jest worker may have made the same link a moment ago.
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
}

function newestSource(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  return fs
    .readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .reduce((newest, f) => Math.max(newest, fs.statSync(path.join(dir, f)).mtimeMs), 0);
}

/**
 * Written at the end of every `npm run build` (package.json "build"). The build is incremental (tsc
 * re-emits only the files whose text changed), so a compiled file's own time says when its source last
 * changed, not when the package was last built: the stamp says that.
 */
export const BUILD_STAMP = "dist/.built";

/** Marks dist/ as built from the sources as they are now: the last step of `npm run build`. */
export function stampBuild(root: string = REPO_ROOT): void {
  fs.writeFileSync(path.join(root, BUILD_STAMP), `${new Date().toISOString()}\n`);
}

/**
 * The shim requires the compiled package, so runs of real providers need `npm run build` first, and a
 * build older than the sources would test yesterday's code.
 */
export function assertBuilt(root: string = REPO_ROOT): void {
  const entry = path.join(root, "dist", "provider", "dynamic.js");
  const stamp = path.join(root, BUILD_STAMP);
  const rebuild =
    "Run `npm run build` first: the serialized provider requires pulumi-gpucloud/dynamic from dist/.";
  if (!fs.existsSync(entry) || !fs.existsSync(stamp))
    throw new Error(
      `The provider server needs the compiled package: ${entry} or ${stamp} is missing. ${rebuild}`,
    );
  const built = fs.statSync(stamp).mtimeMs;
  const sources = ["provider", "sdk", "testing"].map((dir) => newestSource(path.join(root, dir)));
  if (Math.max(...sources) > built)
    throw new Error(`The compiled package in dist/ is older than provider/, sdk/ or testing/. ${rebuild}`);
}

/** Every folder `npm run build` compiles or generates from (tsconfig.build.json's "include"). */
const BUILT_FROM = ["sdk", "provider", "emulator", "testing", "dev", "examples", "bench", "demo"];

/**
 * True when dist/ was built after the last change to anything the build reads: `npm test`,
 * `test:scenarios` and `test:e2e` then skip the build (package.json "build-if-stale"), so CI, whose
 * `npm ci` has just built and which runs the last two side by side, never builds twice nor has two builds
 * writing dist/ at once.
 */
export function isBuilt(root: string = REPO_ROOT): boolean {
  const stamp = path.join(root, BUILD_STAMP);
  if (!fs.existsSync(stamp)) return false;
  const built = fs.statSync(stamp).mtimeMs;
  const settings = ["package.json", "tsconfig.json", "tsconfig.build.json"].map(
    (file) => fs.statSync(path.join(root, file)).mtimeMs,
  );
  return Math.max(...settings, ...BUILT_FROM.map((dir) => newestSource(path.join(root, dir)))) <= built;
}

/**
 * The repository's dev setup, as `npm ci` makes it (package.json "prepare"): the self link; or the build's
 * stamp; or, with --built, exit code 0 when dist/ is up to date and 1 when it needs `npm run build`.
 */
if (require.main === module) {
  if (process.argv.includes("--stamp-build")) stampBuild();
  else if (process.argv.includes("--built")) process.exitCode = isBuilt() ? 0 : 1;
  else ensurePackageLink();
}
