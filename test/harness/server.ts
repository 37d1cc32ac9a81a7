/** The engine's parts the provider tests drive directly, and this repository's dev setup. */
import { REPO_ROOT } from "../../dev/self-link";
import { startDynamicProviderServer } from "../../testing/front-door";
import type { ProviderProcess } from "../../testing/provider-process";

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

export type ProviderServer = ProviderProcess;

export interface ProviderServerOptions {
  /** Working directory of the server: where the serialized provider resolves its `require`s (default: the repository). */
  cwd?: string;
  /** Environment of the server process (default: this process's, without GPUCLOUD_* variables, so tests see only their own config). */
  env?: NodeJS.ProcessEnv;
}

export function withoutGpucloudEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("GPUCLOUD_")));
}

/** Pulumi's dynamic-provider server, started the way the engine starts it. */
export function startProviderServer(options: ProviderServerOptions = {}): Promise<ProviderServer> {
  return startDynamicProviderServer({
    cwd: options.cwd ?? REPO_ROOT,
    env: options.env ?? withoutGpucloudEnv(),
  });
}
