/* global module, require */
/** `npm run test:scenarios`: the scenario suites jest.config.js leaves out of `npm test`, with its settings. */
const settings = require("./jest.config");
const { SCENARIOS } = require("./test/support/scenarios");

/** @type {import('jest').Config} */
module.exports = {
  ...settings,
  testRegex: SCENARIOS.map((pattern) => `${pattern}${pattern.endsWith("/") ? ".*\\.test\\.ts$" : ""}`),
  testMatch: undefined,
  testPathIgnorePatterns: ["/node_modules/", "\\.e2e\\.test\\.ts$"],
};
