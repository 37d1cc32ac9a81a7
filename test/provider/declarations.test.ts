/**
 * The public declarations hold nothing of zod: a user's project compiled with Pulumi's template
 * tsconfig (no skipLibCheck) type-checks every declaration file the package's entry points reach, and
 * zod's own declarations fail there. Read from dist/, the files users get (npm test builds first).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { assertBuilt, REPO_ROOT } from "../harness";

const DIST = path.join(REPO_ROOT, "dist");

/** Every module specifier a declaration file names: imports, re-exports and import() types. */
function specifiers(text: string): string[] {
  const found = [
    ...text.matchAll(/\bfrom\s+["']([^"']+)["']/g),
    ...text.matchAll(/\bimport\s*\(\s*["']([^"']+)["']\s*\)/g),
    ...text.matchAll(/\bimport\s+["']([^"']+)["']/g),
    ...text.matchAll(/\brequire\s*\(\s*["']([^"']+)["']\s*\)/g),
  ];
  return found.map((m) => m[1]);
}

function declarationOf(from: string, specifier: string): string {
  const base = path.resolve(path.dirname(from), specifier);
  const candidates = [`${base}.d.ts`, path.join(base, "index.d.ts")];
  const found = candidates.find((c) => fs.existsSync(c));
  if (!found) throw new Error(`${path.relative(DIST, from)} names ${specifier}, which has no declaration`);
  return found;
}

/** The declaration files `entry` reaches through relative specifiers, and the packages they name. */
function closure(entry: string): { files: string[]; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const specifier of specifiers(fs.readFileSync(file, "utf8"))) {
      if (specifier.startsWith(".")) visit(declarationOf(file, specifier));
      else packages.add(specifier);
    }
  };
  visit(entry);
  return { files: [...files].map((f) => path.relative(DIST, f)).sort(), packages };
}

describe("the public declarations", () => {
  beforeAll(() => assertBuilt());

  const kinds = () =>
    fs
      .readdirSync(path.join(DIST, "provider", "generated", "dynamic"))
      .filter((f) => f.endsWith(".d.ts"))
      .map((f) => path.join(DIST, "provider", "generated", "dynamic", f));

  it("of pulumi-gpucloud and of every pulumi-gpucloud/dynamic/<kind> name no package but Pulumi and Node's", () => {
    for (const entry of [path.join(DIST, "provider", "index.d.ts"), ...kinds()]) {
      const { packages } = closure(entry);
      const foreign = [...packages].filter(
        (p) => p !== "@pulumi/pulumi" && !p.startsWith("@pulumi/pulumi/") && !p.startsWith("node:"),
      );
      expect({ entry: path.relative(DIST, entry), foreign }).toEqual({
        entry: path.relative(DIST, entry),
        foreign: [],
      });
    }
  });

  it("of pulumi-gpucloud/sdk, /emulator, /testing, /dynamic, /native and /policy name neither fastify nor zod", () => {
    const entries = [
      "sdk/index",
      "emulator/index",
      "testing/index",
      "provider/dynamic",
      "provider/native/index",
      "provider/policy/index",
    ];
    for (const entry of entries) {
      const { packages } = closure(path.join(DIST, `${entry}.d.ts`));
      const foreign = [...packages].filter((p) => /^(fastify|@fastify|zod|pino)(\/|$)/.test(p));
      expect({ entry, foreign }).toEqual({ entry, foreign: [] });
    }
  });

  it("of pulumi-gpucloud/testing name no @pulumi/policy, which a project without the cost guard does not install", () => {
    const { packages } = closure(path.join(DIST, "testing", "index.d.ts"));
    expect([...packages].filter((p) => p.startsWith("@pulumi/policy"))).toEqual([]);
  });

  it("of pulumi-gpucloud reach neither the resource definitions nor their framework", () => {
    const { files } = closure(path.join(DIST, "provider", "index.d.ts"));
    expect(files).toContain(path.join("provider", "generated", "resources.d.ts"));
    expect(files.filter((f) => /provider[/\\](resources|framework|codegen)[/\\]/.test(f))).toEqual([]);
  });
});
