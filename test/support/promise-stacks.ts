/**
 * Leaves unmapped the stack @pulumi/pulumi records for each of its promises (jest.config.js runs this
 * after jest's set-up of each test file).
 *
 * Jest maps every stack a test file's code builds through the source maps of the files in it, so that a
 * failure points at lines of TypeScript. @pulumi/pulumi builds a stack for each promise of each resource
 * (`debuggablePromise` in runtime/debuggable.js keeps `new Error().stack`, which it prints only in a
 * report of promises a program leaked), and mapping those was about a tenth of the CPU of the suites that
 * run stacks in process (profiled). Those stacks keep V8's own text; every other stack, a failing
 * expectation's included, is still mapped.
 */
const mapped = Error.prepareStackTrace;

if (mapped) {
  Error.prepareStackTrace = (error, frames) =>
    frames[0]?.getFunctionName() === "debuggablePromise"
      ? [String(error), ...frames.map((frame) => `    at ${frame}`)].join("\n")
      : mapped(error, frames);
}

export {};
