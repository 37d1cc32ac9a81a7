/**
 * No build output in git: what `npm pack` writes into a clone (the tarball, and through `prepare` the build
 * in dist/ and the package's self link in node_modules/) is ignored by git, so packing leaves `git status`
 * clean; and no tarball is committed. The files the build regenerates that git does track (schema.json,
 * provider/generated/, the reference pages) are kept equal to what it writes by test/provider/schema.test.ts.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { REPO_ROOT } from "../../dev/self-link";

const run = promisify(execFile);

/**
 * The paths among `paths` that git ignores: `git check-ignore` prints those (never a tracked file, which
 * `npm pack` overwriting would leave modified) and exits 1 when none is.
 */
async function ignoredByGit(paths: string[]): Promise<string[]> {
  try {
    const { stdout } = await run("git", ["check-ignore", ...paths], { cwd: REPO_ROOT });
    return stdout.split("\n").filter(Boolean);
  } catch (err) {
    if ((err as { code?: number }).code === 1) return [];
    throw err;
  }
}

describe("npm pack in a clone", () => {
  let tarball: string;

  beforeAll(async () => {
    // npm's own name for the tarball it writes into the current folder.
    const { stdout } = await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
      cwd: REPO_ROOT,
    });
    tarball = (JSON.parse(stdout) as { filename: string }[])[0].filename;
  });

  it("writes a tarball that git ignores", async () => {
    expect(tarball).toMatch(/^pulumi-gpucloud-\d+\.\d+\.\d+.*\.tgz$/);
    expect(await ignoredByGit([tarball, "pulumi-gpucloud-9.9.9.tgz"])).toEqual([
      tarball,
      "pulumi-gpucloud-9.9.9.tgz",
    ]);
  });

  it("builds (prepare) only into folders git ignores", async () => {
    const written = ["dist/provider/index.js", "dist/provider/index.d.ts", "node_modules/pulumi-gpucloud"];
    expect(await ignoredByGit(written)).toEqual(written);
  });

  it("finds no tarball committed", async () => {
    const { stdout } = await run("git", ["ls-files", "--", "*.tgz"], { cwd: REPO_ROOT });
    expect(stdout).toBe("");
  });

  it("tells ignored from tracked (a tracked file is not reported ignored)", async () => {
    expect(await ignoredByGit(["package.json", "schema.json", tarball])).toEqual([tarball]);
  });
});
