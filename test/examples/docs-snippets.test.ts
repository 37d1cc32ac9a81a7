/**
 * Every program snippet of the README and docs/ compiles or runs as written, in the setting it names, in
 * a project outside the repository made from the fleet example with this package installed from
 * `npm pack`'s tarball (the examples' CommonJS and Pulumi's template settings):
 * - each TypeScript block: a whole module (a program's `export =`, a script's `main()`, a `test(...)`)
 *   as written; a piece of a program's body inside the program's function, which is why it cannot export;
 * - the SDK's whole instance lifecycle (docs/sdk.md) runs against an emulator and prints what the page shows;
 * - the cost guard's test (docs/cost-guard.md) and the stopped-clock test (docs/testing.md) pass under
 *   Node's test runner;
 * - each Pulumi YAML program uses only what the package schema declares.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { parse } from "yaml";
import { startEmulator, type RunningEmulator } from "pulumi-gpucloud/emulator";
import { GpuCloudClient } from "pulumi-gpucloud/sdk";
import { installPackageInto } from "../../dev/installed";
import { REPO_ROOT } from "../../dev/self-link";
import type { PackageSchema } from "../../provider/codegen/package-schema";
import { YamlProgramChecker } from "../native/yaml-program";
import {
  codeBlocks,
  docFiles,
  docSection,
  exportsFromBody,
  isWholeModule,
  readDoc,
  snippetModule,
} from "./docs";
import { nodeTestSummary } from "../support/node-test-summary";

const run = promisify(execFile);

/**
 * A guard against hangs, not a timing assertion: an install from the tarball, a strict compile against
 * @pulumi/pulumi's types and a run take a minute alone, and several on a 2-core machine shared with
 * other suites.
 */
jest.setTimeout(300_000);

interface Snippet {
  /** The file and the block's place among its TypeScript blocks, as `docs/sdk.md` block 2. */
  where: string;
  block: string;
  /** The module written for the compiler, named after `where`. */
  file: string;
}

const tsc = path.join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");

function snippetsOf(language: string): { where: string; block: string }[] {
  return docFiles().flatMap((file) =>
    codeBlocks(readDoc(file), language).map((block, i) => ({ where: `${file}#${i + 1}`, block })),
  );
}

describe("the TypeScript snippets of the README and docs/", () => {
  let dir: string;
  let project: string;
  let snippets: Snippet[];
  let emulator: RunningEmulator | undefined;
  /** What tsc printed for the snippets and the fleet program, compiled once in `beforeAll`. */
  let compileErrors: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "docs-snippets-"));
    project = path.join(dir, "my-fleet");
    fs.cpSync(path.join(REPO_ROOT, "examples", "fleet"), project, { recursive: true });
    await installPackageInto(project);
    snippets = snippetsOf("ts").map(({ where, block }) => ({
      where,
      block,
      file: `${where.replace(/[^\w]+/g, "-")}.ts`,
    }));
    const folder = path.join(project, "snippets");
    fs.mkdirSync(folder);
    for (const s of snippets) {
      fs.writeFileSync(path.join(folder, s.file), isWholeModule(s.block) ? s.block : snippetModule(s.block));
    }
    // The fleet program itself beside them, for the tests that import it (`./index`): one program, so
    // @pulumi/pulumi's declarations are checked once, not once more for the fleet program alone.
    fs.copyFileSync(path.join(project, "index.ts"), path.join(folder, "index.ts"));
    // The project's own settings (Pulumi's template: strict, no skipLibCheck).
    fs.writeFileSync(
      path.join(folder, "tsconfig.json"),
      JSON.stringify({ extends: "../tsconfig.json", compilerOptions: { outDir: "out" }, include: ["*.ts"] }),
    );
    compileErrors = await run(process.execPath, [tsc, "-p", folder, "--pretty", "false"], {
      cwd: folder,
    }).then(
      () => "",
      (err: { stdout?: string; message: string }) => err.stdout || err.message,
    );
  });
  afterAll(async () => {
    await emulator?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("holds no piece of a program's body that exports: programs export their function", () => {
    expect(snippets.filter((s) => exportsFromBody(s.block)).map((s) => s.where)).toEqual([]);
    expect(snippets.length).toBeGreaterThanOrEqual(10);
  });

  it("compile, each in the setting it names, against the installed package", () => {
    expect(compileErrors).toBe("");
  });

  /** The compiled module of the first snippet of `file`'s section `title`. */
  function compiled(file: string, title: string): string {
    const [block] = codeBlocks(docSection(file, title), "ts");
    const snippet = snippets.find((s) => s.block === block)!;
    return path.join(project, "snippets", "out", snippet.file.replace(/\.ts$/, ".js"));
  }

  it("runs the SDK's whole instance lifecycle against the emulator, printing what docs/sdk.md shows", async () => {
    emulator = await startEmulator({ port: 0, timeScale: 60 });
    const section = docSection("docs/sdk.md", "An instance's whole life");
    const { stdout } = await run(process.execPath, [compiled("docs/sdk.md", "An instance's whole life")], {
      cwd: project,
      env: { ...process.env, GPUCLOUD_BASE_URL: emulator.url, GPUCLOUD_API_KEY: "demo-key" },
    });
    const [shown] = codeBlocks(section, "");
    expect(stdout).toBe(shown);
    // Every step reached the cloud, in order, and nothing is left billing.
    const log = (await (await fetch(`${emulator.url}/_emulator/requests`)).json()) as {
      requests: { method: string; path: string }[];
    };
    const writes = log.requests.filter((r) => r.method === "POST").map((r) => r.path);
    expect(writes).toEqual([
      "/instance/create_by_pod",
      "/instance/update_title",
      "/instance/shutdown",
      "/instance/startup",
      "/instance/destroy",
    ]);
    const api = new GpuCloudClient({ baseUrl: emulator.url, apiKey: "demo-key" });
    try {
      expect((await api.instances.list()).total).toBe(0);
    } finally {
      await api.close();
    }
  });

  it("passes the cost guard's test of docs/cost-guard.md with Node's test runner", async () => {
    const test = compiled("docs/cost-guard.md", "In your tests");
    const { stdout } = await run(process.execPath, ["--test", "--test-force-exit", test], { cwd: project });
    expect(nodeTestSummary(stdout)).toMatchObject({ pass: 1, fail: 0 });
  });

  it("passes the stopped-clock test of docs/testing.md with Node's test runner, without waiting out a timeout", async () => {
    const test = compiled("docs/testing.md", "Moving the emulator's clock");
    const { stdout } = await run(process.execPath, ["--test", "--test-force-exit", test], { cwd: project });
    expect(nodeTestSummary(stdout)).toMatchObject({ pass: 1, fail: 0 });
  });
});

describe("the Pulumi YAML programs of the README and docs/", () => {
  const schema = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "schema.json"), "utf8")) as PackageSchema;
  const programs = snippetsOf("yaml")
    .map(({ where, block }) => ({ where, program: parse(block) as Record<string, unknown> }))
    .filter(({ program }) => program.resources !== undefined);

  it("use only what the package schema declares, with the right types", () => {
    expect(programs.map(({ where }) => where)).toEqual(
      expect.arrayContaining(["docs/_index.md#1", "docs/native-plugin.md#1"]),
    );
    for (const { where, program } of programs) {
      expect({ where, problems: new YamlProgramChecker(schema, program as never).check() }).toEqual({
        where,
        problems: [],
      });
    }
  });
});
