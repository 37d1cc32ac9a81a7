// The scenario suites run in `npm run test:scenarios`, not here (test/support/scenarios.js says why).
const path = require("node:path");
const { SCENARIOS } = require("./test/support/scenarios");

// The suites start hundreds of Node.js processes (a provider plugin or a dynamic-provider server per
// operation, as the engine does, emulators, user projects), and each spends most of its CPU compiling the
// modules it loads (@pulumi/pulumi alone loads 770). Node.js 22.1 and later keep that compiled code in
// this folder, inherited by jest's workers and every process they start: a Fleet suite's CPU fell from
// 65 s to 46 s on Node.js 24 (measured). Node.js 20 ignores it. A cache set by the caller is kept.
process.env.NODE_COMPILE_CACHE ??= path.join(__dirname, "node_modules", ".cache", "pulumi-gpucloud-compile");

/** @type {import('jest').Config} */
module.exports = {
  // Node's environment, with workers that end at once when the run is over (see the file).
  testEnvironment: "<rootDir>/test/support/environment.js",
  // @pulumi/pulumi's stack for each of its promises, left unmapped (see the file).
  setupFilesAfterEnv: ["<rootDir>/test/support/promise-stacks.ts"],
  // Jest's module loader, keeping V8's compiled code between the test files of a worker (see the file).
  runtime: "<rootDir>/test/support/runtime.js",
  roots: ["<rootDir>/test"],
  // Transformed files are kept beside the dependencies, so a fresh install (npm ci, as CI runs) starts
  // cold as a new machine does, and nothing outside the clone is written.
  cacheDirectory: path.join(__dirname, "node_modules", ".cache", "jest"),
  testMatch: ["**/*.test.ts"],
  // Browser tests (*.e2e.test.ts) need Chromium: they run in `npm run test:e2e`, not in `npm test`.
  testPathIgnorePatterns: ["/node_modules/", "\\.e2e\\.test\\.ts$", ...SCENARIOS],
  transform: {
    // Each file transpiled on its own, types stripped: type errors are caught once, by `npm run typecheck`.
    // SWC does it natively, in a few milliseconds a file: ts-jest ran TypeScript's compiler in every
    // worker, and a clean clone's npm test spent 30 s more CPU on it (measured: 317 CPU-s against 287).
    "^.+\\.ts$": [
      "@swc/jest",
      {
        jsc: { parser: { syntax: "typescript" }, target: "es2022" },
        module: { type: "commonjs" },
        sourceMaps: "inline",
      },
    ],
  },
  moduleNameMapper: {
    "^pulumi-gpucloud$": "<rootDir>/provider/index.ts",
    "^pulumi-gpucloud/sdk$": "<rootDir>/sdk/index.ts",
    "^pulumi-gpucloud/emulator$": "<rootDir>/emulator/index.ts",
  },
  // Babel instrumentation bloats serialized dynamic providers ~35x
  // (docs/design/pulumi-machinery.md#runtime-mocks-and-jest).
  coverageProvider: "v8",
  // A guard against hangs, not a timing assertion: suites that run whole stacks take 10-20 s alone and
  // 40-60 s on a 2-core machine loaded by a second suite (measured), so 30 s failed healthy runs there.
  testTimeout: 120000,
  // Figures tests report (test/support/figures.ts) are printed once, after the run.
  reporters: ["default", "<rootDir>/test/support/figures-reporter.js"],
  // Jest's default on a 2-core machine is one worker, but the suites mostly wait on loopback HTTP, child
  // processes and timers: with two workers a whole run kept the two cores 60% busy. Four keep them busy
  // (idle 2-core machine, measured: jest 211 s with two workers, 161 s with three, 133 s with four), and
  // no file took more than a few seconds longer.
  maxWorkers: 4,
  // Each test file leaves tens of MB behind in its worker (module registries held by the libraries the
  // suites load), so a worker that ran half the suites ended at 1.7 GB of heap and spent ever more of its
  // time collecting garbage. Jest starts a fresh worker once one grows past this (CPU of a whole run, measured:
  // 733 s before, 521 s after).
  workerIdleMemoryLimit: "512MB",
};
