/**
 * undici, the HTTP library every call to the cloud goes through, loaded when the first connection is made
 * rather than when the SDK loads. A process that never calls the cloud skips its 110 modules: a provider
 * answering a preview's Check and Diff (each `pulumi preview` starts the provider afresh), a policy pack
 * that reads no catalogue. Loading the native provider's server or the dynamic provider took 0.36-0.38
 * CPU-s with it, 0.28-0.32 without (Node.js 24, compile cache warm, measured). Its types come through
 * `import type`, which loads nothing.
 */
let loaded: typeof import("undici") | undefined;

export function undici(): typeof import("undici") {
  return (loaded ??= require("undici") as typeof import("undici"));
}
