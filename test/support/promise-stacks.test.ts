/**
 * promise-stacks.ts: @pulumi/pulumi's stack for each promise keeps V8's text, every other stack is still
 * mapped to the TypeScript it came from.
 */
import { readFileSync } from "node:fs";

/** @pulumi/pulumi's own (internal, so not in its declarations). */
const { debuggablePromise } = require("@pulumi/pulumi/runtime/debuggable") as {
  debuggablePromise<T>(p: Promise<T>, ctx: string): Promise<T>;
};

/** The stack @pulumi/pulumi keeps on a promise it watches. */
function recordedStack(): string {
  const watched = Promise.resolve();
  void debuggablePromise(watched, "a test's promise");
  return (watched as unknown as { _debugStackTrace: string })._debugStackTrace;
}

describe("stacks in a test file", () => {
  it("@pulumi/pulumi's promise stacks are V8's own text, naming its JavaScript", () => {
    const [, top] = recordedStack().split("\n");
    expect(top).toMatch(/^ {4}at debuggablePromise \(.*@pulumi\/pulumi\/runtime\/debuggable\.js:\d+:\d+\)$/);
  });

  it("an error's stack still points at the line of TypeScript that made it", () => {
    const error = new Error("mapped");
    const line =
      readFileSync(__filename, "utf8")
        .split("\n")
        .findIndex((l) => l.includes('new Error("mapped")')) + 1;
    expect(error.stack?.split("\n")[1]).toContain(`promise-stacks.test.ts:${line}:`);
  });
});
