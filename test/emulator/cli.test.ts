import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { createInterface } from "node:readline";
import ts from "typescript";

const ROOT = join(__dirname, "..", "..");

/** Transpiles emulator/ into a temporary folder so the CLI runs from the current sources, built or not. */
function transpileEmulator(): string {
  const out = mkdtempSync(join(tmpdir(), "gpucloud-cli-"));
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? walk(path) : path.endsWith(".ts") ? [path] : [];
    });
  for (const file of walk(join(ROOT, "emulator"))) {
    const { outputText } = ts.transpileModule(readFileSync(file, "utf8"), {
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
      },
    });
    const target = join(out, relative(ROOT, file)).replace(/\.ts$/, ".js");
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, outputText);
  }
  return out;
}

function runCli(out: string, args: string[]): ChildProcess {
  return spawn(process.execPath, [join(out, "emulator", "cli.js"), ...args], {
    env: { ...process.env, NODE_PATH: join(ROOT, "node_modules") },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", (line) => {
      lines.close();
      resolve(line);
    });
    child.once("exit", (code) => reject(new Error(`exited with ${code} before printing`)));
  });
}

function exitCode(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

describe("gpucloud-emulator CLI", () => {
  let out: string;
  beforeAll(() => {
    out = transpileEmulator();
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it("prints the listening line first, serves the API with the given key, and exits cleanly on SIGTERM", async () => {
    const child = runCli(out, [
      "--port",
      "0",
      "--time-scale",
      "0",
      "--api-key",
      "team:cli-key",
      "--balance",
      "42.5",
    ]);
    const line = await firstLine(child);
    const match = /^gpucloud emulator listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(line);
    expect(match).not.toBeNull();
    const response = await fetch(`${match![1]}/api/open/v2/balance/info`, {
      headers: { authorization: "Bearer cli-key" },
    });
    expect(await response.json()).toEqual({
      code: 0,
      msg: "success",
      data: { balance: 42.5, card_balance: 0 },
    });
    const exited = exitCode(child);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("exits cleanly on SIGINT", async () => {
    const child = runCli(out, ["--port", "0"]);
    await firstLine(child);
    const exited = exitCode(child);
    child.kill("SIGINT");
    expect(await exited).toBe(0);
  });

  it("prints help with every option", async () => {
    const child = runCli(out, ["--help"]);
    let text = "";
    child.stdout!.on("data", (chunk) => (text += chunk));
    expect(await exitCode(child)).toBe(0);
    for (const option of [
      "--host",
      "--port",
      "--api-key",
      "--balance",
      "--time-scale",
      "--rate-limit",
      "--state",
      "--error-status",
      "--help",
    ]) {
      expect(text).toContain(option);
    }
  });

  it("refuses an invalid option value with a message and exit code 2", async () => {
    const child = runCli(out, ["--port", "seventy"]);
    let text = "";
    child.stderr!.on("data", (chunk) => (text += chunk));
    expect(await exitCode(child)).toBe(2);
    expect(text).toContain("--port");
  });

  it("refuses an --error-status it does not know, naming the allowed modes", async () => {
    const child = runCli(out, ["--port", "0", "--error-status", "quiet"]);
    let text = "";
    child.stderr!.on("data", (chunk) => (text += chunk));
    expect(await exitCode(child)).toBe(2);
    expect(text).toContain('--error-status: must be one of http, envelope, got "quiet"');
  });
});
