/**
 * A data source that fails in its `...Output` form surfaces once, with its own message. Pulumi's runtime
 * prefixes `error serializing property "<name>": ` onto the message of an error each time it passes
 * through a resource input or a stack output (the same object each time, runtime/rpc.js); the CLI's
 * language host reports each distinct error once, with its stack unless it is a RunError
 * (cmd/run/run.js). Checked through the repository's engine (stack outputs) and under Pulumi's runtime
 * mocks (resource inputs, where the failure reaches the language host as an unhandled rejection).
 */
import * as path from "node:path";
import { promisify } from "node:util";
import { execFile } from "node:child_process";
import { assertBuilt, REPO_ROOT } from "../../dev/self-link";
import { API_KEY, useDataSourceCloud } from "../support/data-source-cloud";

const emu = useDataSourceCloud();
const run = promisify(execFile);
const NO_SUCH_GPU = 'getGpu: no GPU model named "nope" among the valid GPU models: 4080, 4090D, 5090.';

/** Runs a fixture script with Node in a process of its own; its stdout, parsed as JSON. */
async function runFixture(script: string, ...args: string[]): Promise<unknown> {
  // Asynchronously: the emulator answering the script runs in this process.
  const { stdout } = await run(process.execPath, [path.join(__dirname, "fixtures", script), ...args], {
    cwd: REPO_ROOT,
    timeout: 60_000,
  }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? "" }));
  return JSON.parse(stdout);
}

describe("a failed ...Output data source", () => {
  beforeAll(() => assertBuilt());

  it("fails a preview through the engine with the data source's message alone, once, through two stack outputs", async () => {
    expect(await runFixture("engine-preview.js", emu.url, API_KEY)).toEqual({
      failed: true,
      message: `preview failed: ${NO_SUCH_GPU}`,
      failures: [NO_SUCH_GPU],
    });
  });

  it("reaches the language host as one RunError with the data source's message, through several resource inputs", async () => {
    // The CLI prints a RunError's message alone, without its stack.
    expect(await runFixture("language-host.js", emu.url, API_KEY)).toEqual([
      { name: "NoMatchError", isNoMatchError: true, message: NO_SUCH_GPU, runError: true },
    ]);
  });
});
