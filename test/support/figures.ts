/**
 * Figures a test reports (sizes, counts, rates) go to one summary after the run instead of the console:
 * test/support/figures-reporter.js names the file (GPUCLOUD_TEST_FIGURES) and prints the summary. Without
 * that reporter the figure is written to stdout, so it is never lost.
 */
import { appendFileSync } from "node:fs";

export const FIGURES_ENV = "GPUCLOUD_TEST_FIGURES";

export function reportFigure(name: string, text: string): void {
  const file = process.env[FIGURES_ENV];
  if (file) appendFileSync(file, JSON.stringify({ name, text }) + "\n");
  else process.stdout.write(`${name}: ${text}\n`);
}
