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
 * no exit hook), nothing it started is left behind.
 */
export function nodeExitingWithEngine(script: string, args: string[]): { command: string; args: string[] } {
  // Unreferenced: the pipe must not keep alive a program that ends by itself (a pack that fails to load).
  const exitWithEngine =
    'process.stdin.on("end", () => process.exit()).on("error", () => process.exit()).resume().unref();';
  // Under -e, process.argv[1] is the first argument: a placeholder where `node script` would put the script.
  return {
    command: process.execPath,
    args: ["-e", `${exitWithEngine} require(${JSON.stringify(script)});`, path.basename(script), ...args],
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
