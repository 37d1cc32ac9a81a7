/**
 * `pulumi-gpucloud/testing`: run a Pulumi program against an emulator (or the live cloud) in your own tests,
 * without the Pulumi CLI: preview, up, refresh, preview --refresh and destroy, with each step and its changes
 * as data. Resources go through Pulumi's own dynamic-provider server, as under the CLI; policy packs
 * (`policyPacks`) run through Pulumi's own policy-pack runner, as under `--policy-pack`.
 */
export { Stack, type StackOptions } from "./stack";
export {
  CheckFailedError,
  OperationError,
  StepError,
  typeName,
  type EngineEvent,
  type Op,
  type Operation,
  type OperationResult,
  type PropertyChange,
  type Step,
} from "./engine";
export type { ResourceRecord, StackState } from "./state";
export { ProviderCallError, ResourceInitFailedError } from "./provider-process";
export type { EngineMessage, Severity } from "./engine-log";
export {
  dynamicFrontDoor,
  gpucloudPlugin,
  nativeFrontDoor,
  type FrontDoor,
  type FrontDoorContext,
  type FrontDoorFactory,
  type NativeFrontDoorOptions,
} from "./front-door";
export {
  costGuardPolicyPack,
  policyReport,
  PolicyViolationError,
  type EnforcementLevel,
  type PolicyPackConfig,
  type PolicyPackOptions,
  type PolicyViolation,
} from "./policy-pack";
export { displayValue, isSecret, secret, UNKNOWN, type Props, type WrappedSecret } from "./wire";
export type { SteppedClock } from "./clock";
