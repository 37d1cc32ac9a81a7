/**
 * docs/using-the-cli.md's "Copying an example" before publication, followed exactly outside the
 * repository: `npm pack` in the repository, then `npm install` of its tarball, with the real registry,
 * which does not hold the package (see installs.ts).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { configuredRegistry } from "../../dev/registry-stand-in";
import { REPO_ROOT } from "../../dev/self-link";
import { codeBlocks, docSection } from "./docs";
import { copyingRecipe, installedPackage, installWorld, repositoryStandIn } from "./installs";

/** An install from the registry, on a loaded machine. */
jest.setTimeout(600_000);

const world = installWorld({ standIn: false });
const { version } = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as {
  version: string;
};

describe("docs/using-the-cli.md: Copying an example, before publication", () => {
  const [, beforePublication] = codeBlocks(docSection("docs/using-the-cli.md", "Copying an example"), "sh");

  it("npm pack in the repository, npm install of its tarball, tsc compiles", async () => {
    const dir = repositoryStandIn(world.scratch(), "before");
    // The real registry, which does not hold the package: the tarball alone must satisfy the project.
    const upstream = await configuredRegistry();
    const recipe = world.keep(copyingRecipe(dir, () => upstream));
    await recipe.run(beforePublication);
    const project = path.join(dir, "my-fleet");
    expect(fs.readdirSync(dir).filter((f) => f.endsWith(".tgz"))).toEqual([`pulumi-gpucloud-${version}.tgz`]);
    expect(installedPackage(project)).toEqual({ link: false, version: version });
    const manifest = JSON.parse(fs.readFileSync(path.join(project, "package.json"), "utf8"));
    expect(manifest.dependencies["pulumi-gpucloud"]).toMatch(/^file:.*pulumi-gpucloud-\d+\.\d+\.\d+\.tgz$/);
    expect(fs.existsSync(path.join(project, "bin", "index.js"))).toBe(true);
  });
});
