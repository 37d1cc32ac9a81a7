/**
 * docs/using-the-cli.md's "Copying an example" after publication, followed exactly outside the repository:
 * the package from the npm registry (a stand-in until it is published: see installs.ts), then
 * docs/testing.md's test template in the project.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { codeBlocks, docSection, savedAs } from "./docs";
import { copyingRecipe, installedPackage, installWorld, repositoryStandIn } from "./installs";
import { nodeTestSummary } from "../support/node-test-summary";

/** An install from the registry, on a loaded machine. */
jest.setTimeout(600_000);

const world = installWorld();

describe("docs/using-the-cli.md: Copying an example, after publication", () => {
  const [afterPublication] = codeBlocks(docSection("docs/using-the-cli.md", "Copying an example"), "sh");
  const template = docSection("docs/testing.md", "The test template");

  it("npm install takes the package from the registry, tsc compiles, the test template passes", async () => {
    const dir = repositoryStandIn(world.scratch(), "after");
    const recipe = world.keep(copyingRecipe(dir, () => world.registry().url));
    await recipe.run(afterPublication);
    const project = path.join(dir, "my-fleet");
    expect(installedPackage(project)).toEqual({ link: false, version: world.registry().version });
    expect(fs.existsSync(path.join(project, "bin", "index.js"))).toBe(true);
    const [test] = codeBlocks(template, "ts");
    fs.writeFileSync(path.join(project, savedAs(template, test)), test);
    await recipe.run(codeBlocks(template, "sh")[0]);
    const run = recipe.ran.find((r) => r.command.startsWith("node --test"));
    expect(nodeTestSummary(run?.output ?? "")).toMatchObject({ pass: 1, fail: 0 });
  });
});
