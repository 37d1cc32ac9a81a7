/**
 * This package installed the way users get it (`npm install pulumi-gpucloud`), in a temporary Pulumi
 * project folder: what the serialized provider looks like there differs from inside this repository,
 * where the package is reached through a symlink (see provider/shim.ts).
 *
 * Layout: the tarball `npm pack` makes, unpacked into node_modules/pulumi-gpucloud; @pulumi/pulumi copied
 * beside it, because Pulumi's serializer looks our package.json up from its own folder, and @pulumi/policy
 * too, for the policy pack; every other
 * dependency linked from this repository's node_modules, so nothing is downloaded.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { assertBuilt, REPO_ROOT } from "./self-link";

const run = promisify(execFile);

/** The resource kinds, by the last part of their type token. */
export type StoredProviders = Record<"Instance" | "IdleClosePolicy" | "PersonalImage", string>;

export interface InstalledProject {
  /** The project folder: run Pulumi programs and the provider server with this as their working directory. */
  dir: string;
  /** The `__provider` text each resource class stores, from a program run in the project folder. */
  storedProviders(): Promise<StoredProviders>;
  remove(): Promise<void>;
}

export async function installPackedCopy(): Promise<InstalledProject> {
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), "gpucloud-installed-"));
  try {
    await installPackageInto(dir);
    await fs.promises.writeFile(path.join(dir, "program.js"), CAPTURE_PROGRAM);
  } catch (err) {
    await fs.promises.rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    dir,
    async storedProviders() {
      const { stdout } = await run(process.execPath, ["program.js"], { cwd: dir });
      return JSON.parse(stdout) as StoredProviders;
    },
    remove: () => fs.promises.rm(dir, { recursive: true, force: true }),
  };
}

/**
 * What `npm install pulumi-gpucloud @pulumi/pulumi` does in the project folder `dir`, without the registry:
 * the package from `npm pack` in node_modules, recorded in the project's package.json (when it has one) as
 * a dependency on this version.
 */
export async function installPackageInto(projectDir: string): Promise<void> {
  assertBuilt();
  // npm pack runs in this repository, so a relative folder would name the wrong place.
  const dir = path.resolve(projectDir);
  const modules = path.join(dir, "node_modules");
  await fs.promises.mkdir(modules, { recursive: true });
  await unpackInto(dir, path.join(modules, "pulumi-gpucloud"));
  // Copied, not linked: each resolves its own dependencies from the project, as after `npm install`; a
  // project that runs the cost guard policy pack has @pulumi/policy beside @pulumi/pulumi.
  for (const name of ["pulumi", "policy"]) {
    await fs.promises.cp(
      path.join(REPO_ROOT, "node_modules", "@pulumi", name),
      path.join(modules, "@pulumi", name),
      {
        recursive: true,
      },
    );
  }
  await linkOtherDependencies(modules);
  const manifestFile = path.join(dir, "package.json");
  if (!fs.existsSync(manifestFile)) return;
  const manifest = JSON.parse(await fs.promises.readFile(manifestFile, "utf8"));
  const { version } = JSON.parse(await fs.promises.readFile(path.join(REPO_ROOT, "package.json"), "utf8"));
  manifest.dependencies = { ...manifest.dependencies, "pulumi-gpucloud": `^${version}` };
  await fs.promises.writeFile(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
}

/** The tarball `npm pack` makes of this repository, written into `destination`; its path. */
export async function packTarball(destination: string): Promise<string> {
  // --ignore-scripts: the caller has built dist/ (assertBuilt); `prepare` would rebuild it for nothing.
  const { stdout } = await run(
    "npm",
    ["pack", "--ignore-scripts", "--json", "--pack-destination", path.resolve(destination)],
    { cwd: REPO_ROOT },
  );
  const [{ filename }] = JSON.parse(stdout) as { filename: string }[];
  return path.join(path.resolve(destination), filename);
}

async function unpackInto(scratch: string, packageDir: string): Promise<void> {
  const tarball = await packTarball(scratch);
  await fs.promises.mkdir(packageDir, { recursive: true });
  await run("tar", ["-xzf", tarball, "-C", packageDir, "--strip-components=1"]);
  await fs.promises.rm(tarball);
}

async function linkOtherDependencies(modules: string): Promise<void> {
  const source = path.join(REPO_ROOT, "node_modules");
  for (const entry of await fs.promises.readdir(source)) {
    if (entry === "pulumi-gpucloud" || entry === "@pulumi" || entry.startsWith(".")) continue;
    if (fs.existsSync(path.join(modules, entry))) continue;
    await fs.promises.symlink(path.join(source, entry), path.join(modules, entry), "dir");
  }
}

/** A user's Pulumi program, under Pulumi's runtime mocks: prints the `__provider` of each resource class. */
const CAPTURE_PROGRAM = `
const pulumi = require("@pulumi/pulumi");
const stored = {};
pulumi.runtime.setMocks(
  {
    newResource(args) {
      stored[args.type.split(":").pop()] = args.inputs.__provider;
      return { id: args.name + "-id", state: args.inputs };
    },
    call: (args) => args.inputs,
  },
  "project",
  "stack",
  false,
);
const gpucloud = require("pulumi-gpucloud");
const resources = [
  new gpucloud.Instance("i", { podUuid: "p", gpuUuid: "g", gpuNums: 1 }),
  new gpucloud.IdleClosePolicy("p", { instanceUuid: "i", idlePeriodMinutes: 10 }),
  new gpucloud.PersonalImage("m", { instanceUuid: "i" }),
];
Promise.all(resources.map((r) => new Promise((resolve) => r.id.apply(resolve)))).then(() =>
  process.stdout.write(JSON.stringify(stored)),
);
`;
