/* global module */
/**
 * The scenario suites: whole stacks played through the cloud's faults, creates whose answers are lost,
 * two deployers sharing a key, fleets measured, the documentation's recipes installed and run. They hold
 * more than half of the suite's time, so `npm test` (jest.config.js) leaves them to
 * `npm run test:scenarios` (jest.scenarios.config.js), and CI (.ci/run) runs both. Paths as jest
 * matches them.
 */
const SCENARIOS = [
  "/test/faults/",
  "/test/perf/",
  "/test/provider/ownership\\.test\\.ts$",
  "/test/provider/instance-create\\.test\\.ts$",
  "/test/provider/instance-recovery\\.test\\.ts$",
  "/test/examples/docs-recipes\\.test\\.ts$",
  "/test/examples/fleet-cost-guard\\.test\\.ts$",
  // Whole fleets, packs and packages through both doors: each area keeps its fast suites in npm test
  // (test/harness/urns, test/native/yaml-fleet, test/policy/budget, test/examples/docs-links ...), and
  // these, the slowest third of npm test, run here.
  "/test/fleet/",
  "/test/policy/fleet-doors\\.test\\.ts$",
  "/test/policy/issue-31-stack\\.test\\.ts$",
  "/test/harness/policy-packs\\.test\\.ts$",
  "/test/examples/docs-snippets\\.test\\.ts$",
  "/test/examples/fleet-native\\.test\\.ts$",
  "/test/native/plugin-folder\\.test\\.ts$",
  "/test/provider/hostile-answers\\.test\\.ts$",
  // Programs and processes run whole, the next slowest of npm test: the emulator's command line (40
  // emulators started and stopped), the CI example, the installed package, the demo, failures through
  // both doors as the engine reads them, a stopped clock, and a provider host's process. Their areas keep
  // their fast suites in npm test (test/emulator/*, test/harness/engine, test/examples/fleet ...).
  "/test/emulator/cli\\.test\\.ts$",
  "/test/examples/ci\\.test\\.ts$",
  "/test/provider/installed\\.test\\.ts$",
  "/test/demo/",
  "/test/harness/maybe-corrupt\\.test\\.ts$",
  "/test/harness/stopped-clock\\.test\\.ts$",
  "/test/harness/host-process\\.test\\.ts$",
];

module.exports = { SCENARIOS };
