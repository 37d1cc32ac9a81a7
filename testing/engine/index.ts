/**
 * The engine that runs a stack's steps, apart from the user's handle (../stack.ts): what the handle
 * starts it with, and the results and errors its operations give.
 */
export { Engine, type EngineSettings } from "./engine";
export { CheckFailedError, OperationError, StepError } from "./errors";
export type { EngineEvent } from "./step-runner";
export {
  typeName,
  type Op,
  type Operation,
  type OperationResult,
  type PropertyChange,
  type Step,
} from "./steps";
export { inTurn } from "./turns";
