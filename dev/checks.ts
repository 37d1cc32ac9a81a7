/**
 * `npm test`'s static checks, the type check and the lint, run side by side: each is one process on one
 * core, so on a 2-core machine together they take as long as the slower one alone. Each one's output is
 * printed whole when it ends, never interleaved, and the run fails when either fails.
 */
import { spawn } from "node:child_process";
import * as path from "node:path";
import { REPO_ROOT } from "./self-link";

interface Check {
  name: string;
  command: string;
  args: string[];
}

const bin = (name: string) => path.join(REPO_ROOT, "node_modules", ".bin", name);

/** Where each check keeps what it learnt of unchanged files, so a second run re-reads only what changed. */
const CACHE = path.join(REPO_ROOT, "node_modules", ".cache", "pulumi-gpucloud-checks");

const CHECKS: Check[] = [
  {
    name: "typecheck",
    command: bin("tsc"),
    args: [
      "-p",
      "tsconfig.json",
      "--noEmit",
      "--incremental",
      "--tsBuildInfoFile",
      path.join(CACHE, "typecheck"),
    ],
  },
  {
    name: "eslint",
    command: bin("eslint"),
    args: [".", "--cache", "--cache-location", path.join(CACHE, "eslint")],
  },
  { name: "prettier", command: bin("prettier"), args: ["--check", ".", "--cache"] },
];

function run(check: Check): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(check.command, check.args, { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.once("error", (err) => {
      process.stdout.write(`✗ ${check.name}: could not start ${check.command}: ${err.message}\n`);
      resolve(false);
    });
    child.once("close", (code) => {
      const passed = code === 0;
      process.stdout.write(`${passed ? "✓" : "✗"} ${check.name}\n${passed ? "" : output}`);
      resolve(passed);
    });
  });
}

async function main(): Promise<void> {
  const results = await Promise.all(CHECKS.map(run));
  if (results.includes(false)) process.exitCode = 1;
}

void main();
