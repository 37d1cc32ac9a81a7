/* global module, require, process */
/**
 * Jest's node environment, and a worker that ends at once when its last test file is done.
 *
 * Jest force-kills a worker that takes more than 500 ms to end once it is asked to, and prints "A worker
 * process has failed to exit gracefully". A worker that ran many suites holds hundreds of MB of heap, and
 * ending by draining its event loop, Node then tore that heap down: measured from jest's request to the
 * worker's exit, 470-560 ms for 2.7 GB workers, 90-150 ms for workers kept under workerIdleMemoryLimit,
 * more on a loaded machine. With nothing left to run, exiting at `beforeExit` skips that teardown (210 ms
 * and 50-120 ms); `exit` listeners, which kill child processes a suite left behind, still run. A worker in
 * the middle of a run never reaches `beforeExit` (it listens for jest's next test file). Where jest runs a
 * lone test file in its own process, this ends jest the same way, with the exit code jest set.
 */
const { TestEnvironment } = require("jest-environment-node");

let installed = false;

class Environment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    if (installed) return;
    installed = true;
    process.once("beforeExit", (code) => process.exit(code));
  }
}

module.exports = Environment;
