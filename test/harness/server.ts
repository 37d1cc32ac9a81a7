/** The engine's parts the provider tests drive directly, and this repository's dev setup. */

export {
  ResourceInitFailedError,
  type CheckFailure,
  type CheckResult,
  type CreateResult,
  type DiffChanges,
  type DiffResult,
  type ReadResult,
} from "../../testing/provider-process";
export { isSecret, reveal, secret, UNKNOWN, type Props, type WrappedSecret } from "../../testing/wire";
export { assertBuilt, ensurePackageLink, REPO_ROOT } from "../../dev/self-link";

/** This process's environment without GPUCLOUD_* variables, so that tests see only their own config. */
export function withoutGpucloudEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("GPUCLOUD_")));
}
