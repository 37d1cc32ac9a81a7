/** Child processes of the dev scripts. */
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A child process whose failure says what it printed. */
export async function sh(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) {
  try {
    return await run(file, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(" ")} failed in ${cwd}:\n${stdout ?? ""}${stderr ?? ""}`);
  }
}
