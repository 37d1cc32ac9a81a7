/* global module, require, process */
/**
 * A jest reporter: every figure tests report with reportFigure (./figures.ts) is printed once, in one
 * summary after the run. The workers inherit the file's name through the environment.
 */
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const FIGURES_ENV = "GPUCLOUD_TEST_FIGURES";

class FiguresReporter {
  constructor() {
    this.file = path.join(os.tmpdir(), `gpucloud-test-figures-${process.pid}.jsonl`);
    fs.rmSync(this.file, { force: true });
    process.env[FIGURES_ENV] = this.file;
  }

  onRunComplete() {
    if (!fs.existsSync(this.file)) return;
    const figures = fs
      .readFileSync(this.file, "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line));
    fs.rmSync(this.file, { force: true });
    // Grouped by name; within a name, in the order they were reported.
    const lines = figures.sort((a, b) => a.name.localeCompare(b.name)).map((f) => `  ${f.name}: ${f.text}`);
    process.stdout.write(`\nFigures (${figures.length}):\n${lines.join("\n")}\n`);
  }
}

module.exports = FiguresReporter;
