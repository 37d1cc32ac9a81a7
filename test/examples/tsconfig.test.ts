/**
 * Each TypeScript example compiles as a user's copy of it does: its own tsconfig.json, its `pulumi-gpucloud`
 * import resolved to the built package. Here with the repository's TypeScript 5; `npm run test:e2e` also
 * compiles them with TypeScript 6 and the newest release from the npm registry (dev/e2e.ts), which refuse
 * the `moduleResolution: node` these examples once had.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as ts from "typescript";
import { assertBuilt, ensurePackageLink, REPO_ROOT } from "../../dev/self-link";
import { typeErrors } from "../support/type-check";

const EXAMPLES = path.join(REPO_ROOT, "examples");
const typeScriptExamples = fs
  .readdirSync(EXAMPLES)
  .filter((name) => fs.existsSync(path.join(EXAMPLES, name, "tsconfig.json")))
  .sort();

beforeAll(() => {
  assertBuilt();
  ensurePackageLink();
});

it("finds the TypeScript examples", () => {
  expect(typeScriptExamples).toEqual(["fleet", "from-image"]);
  expect(ts.versionMajorMinor).toMatch(/^5\./);
});

describe.each(typeScriptExamples)("examples/%s", (name) => {
  const tsconfig = path.join(EXAMPLES, name, "tsconfig.json");

  it("resolves modules as Node.js does (node16), emitting CommonJS for Pulumi's Node.js runtime", () => {
    const { config } = ts.readConfigFile(tsconfig, ts.sys.readFile);
    expect(config.compilerOptions).toMatchObject({
      module: "node16",
      moduleResolution: "node16",
      strict: true,
    });
    // node16 emits CommonJS for a project whose package.json has no "type": "module".
    const manifest = JSON.parse(fs.readFileSync(path.join(EXAMPLES, name, "package.json"), "utf8"));
    expect(manifest.type).toBeUndefined();
  });

  it("compiles under its own tsconfig with the repository's TypeScript 5", () => {
    expect(typeErrors(tsconfig)).toEqual([]);
  });
});
