/**
 * A plugin process as the Pulumi engine runs one (a resource provider or a policy pack): it prints its
 * gRPC port as its first stdout line and serves until killed. What it writes to stderr is kept for
 * messages; the process never outlives the one that started it.
 */
import { ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import * as readline from "node:readline";

export interface PluginProcessOptions {
  /** What the process is, for messages ("the dynamic-provider server"). */
  description: string;
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Node running `script` with `args` (as `node script ...args` would), ending when its stdin, a pipe from
 * this process, closes: when this process ends, however it ends (a test runner killed with SIGKILL runs
 * no exit hook), nothing it started is left behind. Two modules of @pulumi/pulumi that such a process
 * never uses are loaded when first used, not at start (see `deferUnusedModules`).
 */
export function nodeExitingWithEngine(script: string, args: string[]): { command: string; args: string[] } {
  // Unreferenced: the pipe must not keep alive a program that ends by itself (a pack that fails to load).
  const exitWithEngine =
    'process.stdin.on("end", () => process.exit()).on("error", () => process.exit()).resume().unref();';
  const prelude = `${exitWithEngine} (${deferUnusedModules.toString()})();`;
  // Under -e, process.argv[1] is the first argument: a placeholder where `node script` would put the script.
  return {
    command: process.execPath,
    args: ["-e", `${prelude} require(${JSON.stringify(script)});`, path.basename(script), ...args],
  };
}

/**
 * Runs in the plugin process, before its script (so it must use nothing from outside itself): modules
 * required as the process loads, for work neither a provider server nor a policy pack does, get a
 * stand-in that loads the real module the first time any of it is read:
 * - @npmcli/arborist, as `computeCodePaths`' module requires it: 495 modules, for packaging a cloud
 *   function's dependencies;
 * - TypeScript, through @pulumi/pulumi's typescript-shim (which also picks the copy): 9 MB of JavaScript
 *   that the closure serializer parses a function's source with, which the program does when it registers
 *   a dynamic resource, never the server that runs the provider;
 * - zod's translations of its messages (`z.locales`, 64 files), which zod's core requires as it loads; zod
 *   sets its English messages from their own file, and nothing here asks for another language.
 * The first two were most of the process's start on Node.js 24: loading @pulumi/pulumi took 0.64 CPU-s,
 * 0.39 without the first, 0.29 without both; zod, 0.06 CPU-s, takes 0.04 without its translations
 * (measured, compile cache warm). Each operation starts these processes afresh, as the engine does, and
 * the process behaves the same: only the moment those modules load moves. The stand-in says it is an ES
 * module, so TypeScript's `__importStar` (how @pulumi/pulumi imports arborist, and zod its translations)
 * keeps the stand-in instead of reading every property of it at once.
 */
export function deferUnusedModules(): void {
  const Module = require("node:module") as {
    _load: (request: string, parent: unknown, isMain: boolean) => unknown;
  };
  const load = Module._load;
  const pulumiFile = /[\\/]@pulumi[\\/]pulumi[\\/]/;
  const codePaths = /[\\/]@pulumi[\\/]pulumi[\\/]runtime[\\/]closure[\\/]codePaths\.js$/;
  const zodFile = /[\\/]zod[\\/]v4[\\/]/;
  const deferred = (request: string, from: string) =>
    (request === "@npmcli/arborist" && codePaths.test(from)) ||
    (/[\\/]typescript-shim$/.test(request) && pulumiFile.test(from)) ||
    (request === "../locales/index.cjs" && zodFile.test(from));
  Module._load = function (this: unknown, request, parent, isMain) {
    const from = (parent as { filename?: string } | null)?.filename ?? "";
    if (!deferred(request, from)) return load.call(this, request, parent, isMain);
    let loaded: object | undefined;
    const real = () => (loaded ??= load.call(this, request, parent, isMain) as object);
    return new Proxy(
      {},
      {
        get: (_, key) => (key === "__esModule" ? true : Reflect.get(real(), key)),
        has: (_, key) => Reflect.has(real(), key),
        ownKeys: () => Reflect.ownKeys(real()),
        getOwnPropertyDescriptor: (_, key) => {
          const descriptor = Reflect.getOwnPropertyDescriptor(real(), key);
          return descriptor && { ...descriptor, configurable: true };
        },
      },
    );
  };
}

/** Processes still running: killed when this process exits, however it exits, so none outlives its caller. */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function track(child: ChildProcess): void {
  live.add(child);
  child.once("exit", () => live.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const c of live) c.kill("SIGKILL");
  });
}

/** Waits for the port the process prints as its first stdout line. */
function portOf(child: ChildProcess, description: string, stderr: () => string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout! });
    lines.once("line", (line) => {
      lines.close();
      // Whatever else it prints is read and dropped, so that its end is seen when it exits.
      child.stdout!.resume();
      resolve(line.trim());
    });
    child.once("exit", (code, signal) =>
      reject(
        new Error(`${description} exited (${signal ?? code}) before printing its port. ${stderr()}`.trim()),
      ),
    );
    child.once("error", (err) => reject(new Error(`Could not start ${description}: ${err.message}`)));
  });
}

export class PluginProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly description: string,
    /** The port it serves on. */
    readonly port: string,
    private readonly log: { text: string },
  ) {}

  static async start(options: PluginProcessOptions): Promise<PluginProcess> {
    const child = spawn(options.command, options.args, {
      cwd: options.cwd,
      env: options.env,
      // stdin stays open for the life of this process: a plugin may end itself when it closes.
      stdio: ["pipe", "pipe", "pipe"],
    });
    track(child);
    const log = { text: "" };
    child.stderr!.on("data", (chunk: Buffer) => (log.text += chunk.toString()));
    const port = await portOf(child, options.description, () => log.text);
    return new PluginProcess(child, options.description, port, log);
  }

  /** What the process wrote to stderr so far. */
  get stderr(): string {
    return this.log.text;
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** Why a call failed when the process is gone: how it ended and what it wrote. */
  exitedDuringCall(): Error {
    const code = this.child.signalCode ?? this.child.exitCode;
    return new Error(`${this.description} exited (${code}) during the call. ${this.log.text}`.trim());
  }

  async stop(): Promise<void> {
    if (this.exited) {
      this.child.stdin?.destroy();
      return;
    }
    const closed = new Promise<void>((resolve) => this.child.once("close", () => resolve()));
    this.child.stdin?.end();
    this.child.kill();
    // "close" comes once the process has exited and its stdio pipes are closed: nothing of it stays open.
    await closed;
  }
}
