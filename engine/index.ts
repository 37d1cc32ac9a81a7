/** The miniature Pulumi engine behind the demo, the benchmarks and the example tests (no Pulumi CLI needed). */
export * from "./server";
export {
  Program,
  type ProgramRun,
  type ProgramRunOptions,
  type Registration,
  type Resolution,
} from "./program";
export * from "./stack";
export * from "./state";
