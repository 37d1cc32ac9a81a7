/**
 * Follows a recipe of the documentation or of the CI workflow command by command, as a user would, with
 * pulumi-gpucloud/testing in place of the Pulumi CLI (which cannot be installed here):
 * - `pulumi ...` commands become Stack operations (`--expect-no-changes` fails on any change, as the CLI
 *   exits non-zero; `--policy-pack` runs the pack), `pulumi config set` the stack config;
 * - the emulator command starts the real emulator CLI, on a free port in place of the one written;
 * - `npm install`, `npm ci` and `npm pack` are the test's to handle (from `npm pack`'s tarball, or for
 *   real), `npx tsc` runs the project's own TypeScript or emits with this repository's (see `typescript`),
 *   `cd` moves the recipe;
 * - every other line (`npm init`, `npm pkg`, shell) runs in bash, against the emulator's real address.
 * An unknown `pulumi` or `npx` command fails the recipe: a recipe that changes must be followed anew.
 */
import { ChildProcess, execFile, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as readline from "node:readline";
import { promisify } from "node:util";
import { REPO_ROOT } from "../../dev/self-link";
import { secret, Stack, type OperationResult, type PolicyPackOptions, type Props } from "../../testing";

const run = promisify(execFile);

/** A child process whose failure carries what it printed (tsc prints its errors on stdout). */
async function exec(file: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }) {
  try {
    return await run(file, args, options);
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`${(err as Error).message}\n${stdout ?? ""}${stderr ?? ""}`.trim().slice(0, 4000));
  }
}

/** The address recipes write for the emulator (its default port). */
const WRITTEN_URL = "http://127.0.0.1:8787";

export interface Ran {
  command: string;
  result?: OperationResult;
  /** What a shell command printed (stdout, then stderr). */
  output?: string;
}

export interface RecipeOptions {
  /** The compiled Pulumi program the recipe's `pulumi` commands run. */
  program: string;
  project: string;
  /** Where the recipe's shell commands start. */
  workDir: string;
  /** Environment of the recipe (a CI job's `env`): a file:// PULUMI_BACKEND_URL keeps the state there. */
  env?: Record<string, string>;
  /** `npm install ...` and `npm ci` in `dir`. */
  install?(dir: string, args: string[]): Promise<void>;
  /** `npm pack ...` in `dir`, which stands for this repository. */
  pack?(dir: string, args: string[]): Promise<void>;
  /**
   * Whose TypeScript `npx tsc` runs: the project's own, as npx finds it, which type-checks as the user's
   * does; or this repository's (default), which only emits the JavaScript the recipe runs next
   * (`--noCheck`, a quarter of the CPU). The recipes' code is type-checked elsewhere: as written in
   * docs-snippets.test.ts, and with each recipe's own tsconfig by the install-*.e2e.test.ts suites, which follow the
   * same recipes with `typescript: "project"`.
   */
  typescript?: "repository" | "project";
  /** Runs after each pulumi operation (a test moves the emulator's clock here). */
  after?(command: string, recipe: Recipe): Promise<void>;
}

export class Recipe {
  readonly ran: Ran[] = [];
  private cwd: string;
  private emulator?: { url: string; child: ChildProcess };
  private stack?: Stack;
  private stackName = "dev";
  private config: Props = {};

  constructor(private readonly options: RecipeOptions) {
    this.cwd = options.workDir;
  }

  /** The emulator the recipe started. */
  get emulatorUrl(): string {
    if (!this.emulator) throw new Error("the recipe started no emulator");
    return this.emulator.url;
  }

  /** The current stack, once a pulumi operation opened it. */
  get current(): Stack {
    if (!this.stack) throw new Error("the recipe ran no pulumi operation");
    return this.stack;
  }

  /** Runs a block of commands (a code block of the documentation, a workflow step's `run`). */
  async run(block: string): Promise<void> {
    let shell: string[] = [];
    const flush = async () => {
      if (shell.length > 0) await this.bash(shell.join("\n"));
      shell = [];
    };
    for (const line of commands(block)) {
      if (line.includes("gpucloud-emulator") || line.startsWith("npm run emulator")) {
        await flush();
        await this.startEmulator(line);
        // The rest of such a block waits for the emulator's first line, which startEmulator did.
        return;
      }
      if (/^(pulumi|npm|npx|cd)\b/.test(line)) {
        await flush();
        await this.command(line);
      } else {
        shell.push(line);
      }
    }
    await flush();
  }

  async close(): Promise<void> {
    await this.stack?.close();
    const child = this.emulator?.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const closed = new Promise((resolve) => child.once("close", resolve));
      child.kill();
      await closed;
    }
  }

  private async command(line: string): Promise<void> {
    const words = shellWords(this.localized(line));
    const [tool, verb, ...rest] = words;
    if (tool === "cd") {
      this.cwd = path.resolve(this.cwd, verb);
    } else if (tool === "npm" && (verb === "install" || verb === "ci")) {
      if (!this.options.install) throw new Error(`the recipe cannot run "${line}" here`);
      await this.options.install(this.cwd, rest);
    } else if (tool === "npm" && verb === "pack") {
      if (!this.options.pack) throw new Error(`the recipe cannot run "${line}" here`);
      await this.options.pack(this.cwd, rest);
    } else if (tool === "npm") {
      await this.bash(line);
      return;
    } else if (tool === "npx" && verb === "tsc" && this.options.typescript === "project") {
      await this.bash(line);
      return;
    } else if (tool === "npx" && verb === "tsc") {
      await exec(
        process.execPath,
        [path.join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc"), ...rest, "--noCheck"],
        {
          cwd: this.cwd,
        },
      );
    } else if (tool === "pulumi") {
      await this.pulumi(verb, rest, line);
      return;
    } else {
      throw new Error(`the recipe cannot follow "${line}"`);
    }
    this.ran.push({ command: line });
  }

  private async pulumi(verb: string, args: string[], line: string): Promise<void> {
    const flags = new Set(args.filter((a) => a.startsWith("--")));
    if (
      verb === "login" ||
      (verb === "stack" && args[0] === "init") ||
      (verb === "config" && args[0] === "set")
    ) {
      await this.setting(verb, args, flags);
      this.ran.push({ command: line });
      return;
    }
    const packs = this.policyPacks(args);
    if (packs.length > 0 && verb !== "preview")
      throw new Error(`the recipe follows --policy-pack in previews only`);
    const stack = packs.length > 0 ? await this.openStack(packs) : await this.openStack();
    let result: OperationResult;
    try {
      if (verb === "preview") result = await stack.preview({ refresh: flags.has("--refresh") });
      else if (verb === "up") result = await stack.up({ refresh: flags.has("--refresh") });
      else if (verb === "refresh") result = await stack.refresh();
      else if (verb === "destroy") result = await stack.destroy();
      else throw new Error(`the recipe cannot follow "${line}"`);
    } finally {
      if (packs.length > 0) await stack.close();
    }
    this.ran.push({ command: line, result });
    if (flags.has("--expect-no-changes")) {
      const changed = result.steps.filter((s) => s.op !== "same").map((s) => `${s.name} ${s.op}`);
      if (changed.length > 0) throw new Error(`"${line}" found changes: ${changed.join(", ")}`);
    }
    await this.options.after?.(line, this);
  }

  /** `pulumi login`, `pulumi stack init NAME`, `pulumi config set [--secret] KEY VALUE`. */
  private async setting(verb: string, args: string[], flags: Set<string>): Promise<void> {
    if (verb === "stack") this.stackName = args[1];
    if (verb !== "config") return;
    const [key, value] = args.slice(1).filter((a) => !a.startsWith("--"));
    this.config = { ...this.config, [key]: flags.has("--secret") ? secret(value) : value };
    if (this.stack) await this.stack.setConfig(this.config);
  }

  /**
   * `--policy-pack DIR`, each with the `--policy-pack-config FILE` that follows it. A DIR in node_modules
   * is this repository's own (the job's `npm ci` installed nothing more).
   */
  private policyPacks(args: string[]): PolicyPackOptions[] {
    const packs: PolicyPackOptions[] = [];
    args.forEach((arg, i) => {
      const value = args[i + 1];
      if (arg === "--policy-pack") {
        const local = path.resolve(this.cwd, value);
        packs.push({ path: value.startsWith("node_modules/") ? path.join(REPO_ROOT, value) : local });
      } else if (arg === "--policy-pack-config") {
        packs[packs.length - 1].config = JSON.parse(fs.readFileSync(path.resolve(this.cwd, value), "utf8"));
      }
    });
    return packs;
  }

  /** The recipe's stack; with policy packs, a Stack of its own over the same state, for one preview. */
  private async openStack(policyPacks?: PolicyPackOptions[]): Promise<Stack> {
    if (this.stack && !policyPacks) return this.stack;
    const env = { ...process.env, ...this.options.env };
    const backend = env.PULUMI_BACKEND_URL;
    const stack = await Stack.open({
      program: this.options.program,
      project: this.options.project,
      stack: this.stackName,
      config: this.config,
      env,
      stateFile: backend?.startsWith("file://")
        ? path.join(backend.slice("file://".length), `${this.stackName}.json`)
        : undefined,
      policyPacks,
    });
    if (!policyPacks) this.stack = stack;
    return stack;
  }

  private async startEmulator(line: string): Promise<void> {
    const words = shellWords(line.replace(/\s*>.*$/, ""));
    const args = words.slice(words.findIndex((w) => w === "gpucloud-emulator" || w === "--") + 1);
    const port = args.indexOf("--port");
    if (port >= 0) args[port + 1] = "0";
    else args.push("--port", "0");
    const child = spawn(process.execPath, [path.join(REPO_ROOT, "dist", "emulator", "cli.js"), ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const first = await new Promise<string>((resolve, reject) => {
      const lines = readline.createInterface({ input: child.stdout! });
      lines.once("line", (text) => {
        lines.close();
        child.stdout!.resume();
        resolve(text);
      });
      child.once("exit", (code) => reject(new Error(`"${line}" exited (${code}): ${stderr}`)));
    });
    const url = /listening on (\S+)/.exec(first)?.[1];
    if (!url) throw new Error(`"${line}" printed "${first}" first`);
    this.emulator = { url, child };
    this.ran.push({ command: line });
  }

  private async bash(script: string): Promise<void> {
    const { stdout, stderr } = await exec("bash", ["-euo", "pipefail", "-c", this.localized(script)], {
      cwd: this.cwd,
      env: { ...process.env, ...this.options.env },
    });
    this.ran.push({ command: script, output: `${stdout}${stderr}` });
  }

  /** The command against the emulator the recipe started, wherever it wrote the default address. */
  private localized(text: string): string {
    return this.emulator ? text.split(WRITTEN_URL).join(this.emulator.url) : text;
  }
}

/** The block's commands: continuation lines joined, comments and blank lines dropped. */
export function commands(block: string): string[] {
  return block
    .replace(/\\\n\s*/g, " ")
    .split("\n")
    .map((line) => line.replace(/\s+#\s.*$/, "").trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

/** Words of a simple command line: whitespace-separated, single or double quotes kept together. */
function shellWords(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
}
