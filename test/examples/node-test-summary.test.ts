/**
 * The summary of `node --test`, which the documentation's test recipes are checked by, read in both of
 * its formats whatever Node.js runs this suite: TAP (the default of Node.js 20 and 22 where stdout is not
 * a terminal) and spec (the default from Node.js 23 on).
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { nodeTestSummary } from "../support/node-test-summary";

/** `node --test` of `file` with `reporter`; a failing run is a result too. */
function nodeTest(file: string, reporter: string): Promise<string> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--test", `--test-reporter=${reporter}`, file], (_err, stdout) =>
      resolve(stdout),
    );
  });
}

describe("the summary of node --test", () => {
  let dir: string;
  let file: string;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "node-test-summary-"));
    file = path.join(dir, "two.test.js");
    fs.writeFileSync(
      file,
      'const { test } = require("node:test");\n' +
        'test("passes", () => {});\n' +
        'test("fails", () => { throw new Error("no"); });\n' +
        'test("waits", { skip: true }, () => {});\n',
    );
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each(["tap", "spec"])("is read from the %s reporter's output", async (reporter) => {
    expect(nodeTestSummary(await nodeTest(file, reporter))).toEqual({
      tests: 3,
      pass: 1,
      fail: 1,
      cancelled: 0,
      skipped: 1,
      todo: 0,
    });
  });

  it("holds no count where the output has no summary", () => {
    expect(nodeTestSummary("pass 1\n# passes 1\nfail: 0\n")).toEqual({});
  });
});
