/** pulumi-gpucloud/sdk: the typed client of the GPU cloud's open API v2. */
export { GpuCloudClient, DEFAULT_MAX_RESPONSE_BYTES, type GpuCloudClientOptions } from "./client";
export * from "./errors";
export {
  errorFromResponse,
  readAnswer,
  ANSWER_MEANINGS,
  type Answer,
  type BodyShape,
  type ResponseErrorInput,
  type WaitLimit,
} from "./answers";
export * from "./instances";
export * from "./catalogue";
export * from "./images";
export * from "./account";
export * from "./assets";
export * from "./workflows";
export * from "./model-runs";
export {
  paginate,
  collect,
  walkEnds,
  nextPageSize,
  DEFAULT_MAX_PAGES,
  type Page,
  type PageFetcher,
  type PageRead,
  type PaginateOptions,
} from "./pagination";
export { pollUntil, type WaitOptions, type PollSpec } from "./waiters";
export {
  decide,
  backoffDelay,
  parseRetryAfter,
  isOutcomeUnknown,
  DEFAULT_BACKOFF,
  MAX_RATE_LIMIT_RETRIES,
  NO_RETRIES_YET,
  spend,
  type RetriesSpent,
  type CallSafety,
  type Failure,
  type Decision,
  type BackoffSettings,
} from "./retry-policy";
export {
  checkWorkflowInputs,
  checkModelRunInputs,
  normalizeLabel,
  resourceStringProblem,
  type ManifestParameter,
} from "./validation";
export { API_PREFIX, type RequestEvent, type CallOptions } from "./transport";
export { retryUntil, type RetryUntilOptions } from "./retry-until";
export { sleep, MAX_TIMER_MS, type Clock } from "./sleep";
export { terminalSafe, terminalSafeJson, CUT_MARK } from "./terminal-safe";
