/**
 * The environment a program's data sources read their settings from (GPUCLOUD_BASE_URL, GPUCLOUD_API_KEY,
 * GPUCLOUD_REQUEST_LOG, ...). Under the Pulumi CLI the program and the provider share one environment;
 * `pulumi-gpucloud/testing` runs a program inside the caller's process with its own `env`, and sets it
 * here for the run, so that the program's data sources see what the provider process sees.
 *
 * Kept on a global symbol: the harness and the program may load two copies of this package.
 */
const KEY = Symbol.for("pulumi-gpucloud.programEnvironment");

type Holder = { [KEY]?: NodeJS.ProcessEnv };

export function programEnvironment(): NodeJS.ProcessEnv {
  return (globalThis as Holder)[KEY] ?? process.env;
}

/** Runs `work` with `env` as the program's environment; runs of one process take turns (testing/stack.ts). */
export async function withProgramEnvironment<T>(env: NodeJS.ProcessEnv, work: () => Promise<T>): Promise<T> {
  const holder = globalThis as Holder;
  const previous = holder[KEY];
  holder[KEY] = env;
  try {
    return await work();
  } finally {
    holder[KEY] = previous;
  }
}
