/**
 * The README's "Your own project", followed exactly in an empty folder outside the repository, with the
 * package from the npm registry (a stand-in until it is published: see installs.ts).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { codeBlocks, docSection, savedAs } from "./docs";
import { installedPackage, installWorld, npm } from "./installs";
import { Recipe } from "./recipe";
import { nodeTestSummary } from "../support/node-test-summary";

/** An install from the registry, on a loaded machine. */
jest.setTimeout(600_000);

const world = installWorld();

describe("README: Your own project, installed from the npm registry", () => {
  const section = docSection("README.md", "Your own project");
  const [setUp, build] = codeBlocks(section, "sh");

  it("makes a project in an empty folder whose own test of its program passes", async () => {
    const dir = path.join(world.scratch(), "own");
    fs.mkdirSync(dir);
    const project = path.join(dir, "my-gpus");
    const recipe = world.keep(
      new Recipe({
        program: path.join(project, "bin", "index.js"),
        project: "my-gpus",
        workDir: dir,
        install: npm(() => world.registry().url),
        typescript: "project",
      }),
    );
    await recipe.run(setUp);
    expect(installedPackage(project)).toEqual({ link: false, version: world.registry().version });
    for (const block of codeBlocks(section, "ts"))
      fs.writeFileSync(path.join(project, savedAs(section, block)), block);
    await recipe.run(build);
    const test = recipe.ran.find((r) => r.command.startsWith("node --test"));
    expect(nodeTestSummary(test?.output ?? "")).toMatchObject({ pass: 1, fail: 0 });
  });
});
