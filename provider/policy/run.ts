/**
 * What one policy run keeps: the cloud's answers it read and the running totals of the instances it let
 * through. The Pulumi CLI starts a policy pack's process for each preview and each update (the preview an
 * `up` runs first is a run of its own), so the process is the run and its memory ends with it.
 */

const parts = new Map<symbol, unknown>();

/** The run's part named `key`, made by `make` at its first use. */
export function runPart<T>(key: symbol, make: () => T): T {
  if (!parts.has(key)) parts.set(key, make());
  return parts.get(key) as T;
}

/**
 * Starts a new run in this process: every part is made afresh at its next use. For programs that run
 * policies several times in one process (tests, a pack of one's own driven in-process).
 */
export function startNewRun(): void {
  parts.clear();
}

/** The engine tells a nodejs policy pack whether the run is a preview in PULUMI_NODEJS_DRY_RUN. */
export function isPreview(): boolean {
  return process.env.PULUMI_NODEJS_DRY_RUN === "true";
}
