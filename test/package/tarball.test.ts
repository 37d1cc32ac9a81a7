/**
 * What `npm pack` puts in the tarball users install: the entry points' compiled code and types, the native
 * plugin's folder and schema, the cost guard's policy pack folder, the documentation the README links to,
 * and nothing of this repository's own (bench, demo, dev, examples, tests, sources, source maps).
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { TESTED_NODE_MAJORS } from "../../dev/node-releases";
import { REPO_ROOT } from "../../dev/self-link";
import { isContributorPage, relativeLinks } from "../examples/docs";

const run = promisify(execFile);

interface Manifest {
  exports: Record<string, string | { types?: string; default?: string }>;
  typesVersions: Record<string, Record<string, string[]>>;
  bin: Record<string, string>;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  devDependencies: Record<string, string>;
  engines: { node: string };
}

/**
 * The compiled entry points, the native plugin's folder and schema, the cost guard's policy pack folder,
 * and the pages of docs/ (markdown and their pictures).
 */
const SHIPPED =
  /^(dist\/(sdk|provider|emulator|testing)\/[^/].*\.(js|d\.ts)|plugin\/[^/]+|policy-pack\/[^/]+|schema\.json|docs\/.+\.(md|png))$/;

describe("the published package", () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as Manifest;
  let files: string[];

  beforeAll(async () => {
    // --ignore-scripts: npm test has just built dist/; `prepare` would build it again.
    const { stdout } = await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
      cwd: REPO_ROOT,
    });
    files = (JSON.parse(stdout) as { files: { path: string }[] }[])[0].files.map((f) => f.path);
  });

  const subpaths = () =>
    Object.entries(manifest.exports).filter(([subpath]) => subpath !== "./package.json") as [
      string,
      { types: string; default: string },
    ][];

  /** The shipped files an export target names; a `*` pattern must match at least one. */
  const shippedFor = (target: string) => {
    const pattern = new RegExp(`^${target.slice(2).replace(/[.]/g, "\\.").replace("*", "[^/]+")}$`);
    return files.filter((f) => pattern.test(f));
  };

  it("ships every export's code and types", () => {
    for (const [subpath, target] of subpaths()) {
      expect({ subpath, js: shippedFor(target.default).length > 0 }).toEqual({ subpath, js: true });
      expect({ subpath, types: shippedFor(target.types).length > 0 }).toEqual({ subpath, types: true });
    }
  });

  it("maps every subpath export in typesVersions, for TypeScript's moduleResolution node", () => {
    const mapped = manifest.typesVersions["*"];
    for (const [subpath, target] of subpaths().filter(([s]) => s !== ".")) {
      expect({ subpath, mapped: mapped[subpath.slice(2)] }).toEqual({
        subpath,
        mapped: [target.types.slice(2)],
      });
    }
    expect(Object.keys(mapped).sort()).toEqual(
      subpaths()
        .map(([s]) => s.slice(2))
        .filter(Boolean)
        .sort(),
    );
  });

  it("ships the license its package.json names", () => {
    expect(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).license).toBe(
      "Apache-2.0",
    );
    expect(files).toContain("LICENSE");
    expect(fs.readFileSync(path.join(REPO_ROOT, "LICENSE"), "utf8")).toMatch(
      /^\s*Apache License\s+Version 2\.0, January 2004/,
    );
  });

  it("ships every bin", () => {
    for (const bin of Object.values(manifest.bin)) expect(files).toContain(bin);
  });

  it("holds nothing else: no bench, demo, dev, examples, tests, sources or source maps", () => {
    const others = files.filter(
      (f) => !SHIPPED.test(f) && !["package.json", "README.md", "LICENSE"].includes(f),
    );
    expect(others).toEqual([]);
    for (const folder of ["bench", "demo", "dev", "examples", "test"]) {
      expect(files.filter((f) => f.startsWith(`dist/${folder}/`) || f.startsWith(`${folder}/`))).toEqual([]);
    }
  });

  it("ships every page of docs/ the README links to, so its links resolve in the installed package", () => {
    const linked = relativeLinks("README.md")
      .map((target) => target.split("#")[0])
      .filter((target) => target.startsWith("docs/") && !isContributorPage(target));
    expect(linked.length).toBeGreaterThan(5);
    expect(linked.filter((page) => !files.includes(page))).toEqual([]);
  });

  it("points no shipped file at a source map", () => {
    const pointing = files
      .filter((f) => f.endsWith(".js"))
      .filter((f) => fs.readFileSync(path.join(REPO_ROOT, f), "utf8").includes("sourceMappingURL"));
    expect(pointing).toEqual([]);
  });

  it("takes @pulumi/pulumi from the user's project (a peer), tested here at its lowest version", () => {
    expect(manifest.dependencies["@pulumi/pulumi"]).toBeUndefined();
    expect(manifest.peerDependencies["@pulumi/pulumi"]).toBe("^3.248.0");
    expect(manifest.devDependencies["@pulumi/pulumi"]).toBe("3.248.0");
    const installed = JSON.parse(
      fs.readFileSync(path.join(REPO_ROOT, "node_modules", "@pulumi", "pulumi", "package.json"), "utf8"),
    ) as { version: string };
    expect(installed.version).toBe("3.248.0");
  });

  it("asks for @pulumi/policy only of projects that run the cost guard (an optional peer)", () => {
    expect(manifest.dependencies["@pulumi/policy"]).toBeUndefined();
    expect(manifest.peerDependencies["@pulumi/policy"]).toBe("^1.21.0");
    expect(manifest.peerDependenciesMeta["@pulumi/policy"]).toEqual({ optional: true });
    expect(files).toEqual(
      expect.arrayContaining([
        "policy-pack/PulumiPolicy.yaml",
        "policy-pack/index.js",
        "policy-pack/package.json",
      ]),
    );
  });

  it("claims exactly the Node.js releases it is tested on (npm run test:e2e installs it on each)", () => {
    const claimed = TESTED_NODE_MAJORS.map((major) => (major === 20 ? "^20.19.0" : `^${major}.0.0`));
    expect(manifest.engines.node).toBe(claimed.join(" || "));
  });
});
