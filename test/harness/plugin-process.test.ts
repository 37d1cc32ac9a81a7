/**
 * The plugin processes the harness starts (a dynamic-provider server, a policy pack) load three modules
 * only when something uses them: not at start, and whole and working the first time their users run.
 * @pulumi/pulumi's package walker, @npmcli/arborist, for `computeCodePaths`; TypeScript, for the closure
 * serializer (`serializeFunction`); zod's translations of its messages (English needs none of them).
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { nodeExitingWithEngine } from "../../testing/plugin-process";

const run = promisify(execFile);
/** zod's French for a number given where a string is expected. */
const FRENCH = "Entrée invalide : chaîne de caractères attendu, nombre reçu";

/**
 * What the script saw: which of the two modules were loaded at start, after `computeCodePaths` and
 * `serializeFunction` ran, and what those found.
 */
interface Seen {
  atStart: string[];
  /** Loaded once zod has made an English message (after computeCodePaths and serializeFunction). */
  afterEnglish: string[];
  afterUse: string[];
  codePaths: string[];
  serialized: boolean;
  english: string;
  french: string;
}

let dir: string;
let script: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "plugin-process-"));
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "p", dependencies: {} }));
  fs.writeFileSync(path.join(dir, "included.js"), "module.exports = 1;\n");
  script = path.join(dir, "script.js");
  fs.writeFileSync(
    script,
    `const pulumi = require(${JSON.stringify(require.resolve("@pulumi/pulumi"))});
const { z } = require(${JSON.stringify(require.resolve("zod"))});
const modules = { walker: /[\\\\/]@npmcli[\\\\/]arborist[\\\\/]/, typescript: /[\\\\/]typescript(@[\\d.]+)?[\\\\/](lib[\\\\/])?typescript\\.js$/, translations: /[\\\\/]zod[\\\\/]v4[\\\\/]locales[\\\\/]index\\.cjs$/ };
const loaded = () => Object.keys(modules).filter((name) => Object.keys(require.cache).some((f) => modules[name].test(f)));
const atStart = loaded();
(async () => {
  const paths = await pulumi.runtime.computeCodePaths({ extraIncludePaths: ["included.js"] });
  const answer = 42;
  const { text } = await pulumi.runtime.serializeFunction(() => answer);
  const serialized = text.includes("42");
  const english = z.string().safeParse(1).error.issues[0].message;
  const afterEnglish = loaded();
  const french = z.locales.fr().localeError({ code: "invalid_type", expected: "string", input: 1 });
  process.stdout.write(JSON.stringify({ atStart, afterUse: loaded(), codePaths: [...paths.keys()], serialized, english, afterEnglish, french }));
  process.exit(0);
})();
`,
  );
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function seen(command: string, args: string[]): Promise<Seen> {
  const { stdout } = await run(command, args, { cwd: dir });
  return JSON.parse(stdout) as Seen;
}

describe("a plugin process the harness starts", () => {
  it("loads @pulumi/pulumi without its package walker and TypeScript, zod without its translations, and each when its user runs", async () => {
    const { command, args } = nodeExitingWithEngine(script, []);
    expect(await seen(command, args)).toEqual({
      atStart: [],
      afterEnglish: ["walker", "typescript"],
      afterUse: ["walker", "typescript", "translations"],
      codePaths: ["included.js"],
      serialized: true,
      english: "Invalid input: expected string, received number",
      french: FRENCH,
    });
  });

  it("differs from node running the script alone only there: @pulumi/pulumi and zod load all three at once", async () => {
    expect(await seen(process.execPath, [script])).toEqual({
      atStart: ["walker", "typescript", "translations"],
      afterEnglish: ["walker", "typescript", "translations"],
      afterUse: ["walker", "typescript", "translations"],
      codePaths: ["included.js"],
      serialized: true,
      english: "Invalid input: expected string, received number",
      french: FRENCH,
    });
  });
});
