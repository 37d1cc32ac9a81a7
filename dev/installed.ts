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
import { createHash } from "node:crypto";
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

/** Where a package's packed tarballs are kept, one folder per fingerprint of what they hold (see `packTarball`). */
const packCache = (root: string) => path.join(root, "node_modules", ".cache", "pulumi-gpucloud-pack");

/**
 * The tarball `npm pack` makes of this repository, copied into `destination`; its path. The suites that
 * install the package asked for it about ten times a CI run, each `npm pack` 2 CPU-s for the same bytes,
 * so it is packed once for each state of the files it holds (`packedFilesFingerprint`) and kept in
 * node_modules/.cache, where a fresh install starts without it.
 */
export async function packTarball(destination: string, root: string = REPO_ROOT): Promise<string> {
  const kept = path.join(packCache(root), await packedFilesFingerprint(root));
  let filename = (await fs.promises.readdir(kept).catch(() => [] as string[])).find((f) =>
    f.endsWith(".tgz"),
  );
  if (filename === undefined) filename = await packInto(kept, root);
  const target = path.join(path.resolve(destination), filename);
  await fs.promises.copyFile(path.join(kept, filename), target);
  return target;
}

/**
 * Packs into `folder`, made whole or not at all: the tarball is packed beside it and the folder renamed
 * into place, so a suite packing at the same moment in another worker never reads half a tarball.
 * Folders of earlier fingerprints are removed.
 */
async function packInto(folder: string, root: string): Promise<string> {
  const cache = packCache(root);
  await fs.promises.mkdir(cache, { recursive: true });
  const staging = await fs.promises.mkdtemp(path.join(cache, "packing-"));
  // --ignore-scripts: the caller has built dist/ (assertBuilt); `prepare` would rebuild it for nothing.
  const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", staging], {
    cwd: root,
  });
  const [{ filename }] = JSON.parse(stdout) as { filename: string }[];
  try {
    await fs.promises.rename(staging, folder);
  } catch {
    // Another worker put the same tarball there first.
    await fs.promises.rm(staging, { recursive: true, force: true });
  }
  for (const entry of await fs.promises.readdir(cache)) {
    if (entry !== path.basename(folder) && !entry.startsWith("packing-"))
      await fs.promises.rm(path.join(cache, entry), { recursive: true, force: true });
  }
  return filename;
}

/**
 * Names what `npm pack` would put in the tarball now: the path, size and modification time of every file
 * under package.json's `files` (its exclusions too, which only makes it change more often), package.json
 * and LICENSE. A build, an edited page or a new file changes it.
 */
export async function packedFilesFingerprint(root: string = REPO_ROOT): Promise<string> {
  const manifest = JSON.parse(await fs.promises.readFile(path.join(root, "package.json"), "utf8")) as {
    files: string[];
  };
  const shipped = ["package.json", "LICENSE", ...manifest.files.filter((entry) => !entry.startsWith("!"))];
  const hash = createHash("sha256");
  const visit = async (relative: string): Promise<void> => {
    const stat = await fs.promises.stat(path.join(root, relative)).catch(() => undefined);
    if (stat === undefined) return;
    if (!stat.isDirectory()) {
      hash.update(`${relative}\0${stat.size}\0${stat.mtimeMs}\n`);
      return;
    }
    for (const entry of (await fs.promises.readdir(path.join(root, relative))).sort())
      await visit(path.join(relative, entry));
  };
  for (const entry of shipped) await visit(entry);
  return hash.digest("hex").slice(0, 32);
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
