/**
 * The environment a program's data sources read their settings from (GPUCLOUD_BASE_URL, GPUCLOUD_API_KEY,
 * GPUCLOUD_REQUEST_LOG, ...). Under the Pulumi CLI the program and the provider share one environment;
 * `pulumi-gpucloud/testing` runs a program inside the caller's process with its own `env`, and enters it
 * here for as long as the program runs, so that its data sources see what the provider process sees.
 *
 * Kept on a global symbol: the harness and the program may load two copies of this package. The newest
 * program still running decides; only when none is does this process's own environment apply.
 */
const KEY = Symbol.for("pulumi-gpucloud.programEnvironments");

type Holder = { [KEY]?: NodeJS.ProcessEnv[] };

function running(): NodeJS.ProcessEnv[] {
  const holder = globalThis as Holder;
  return (holder[KEY] ??= []);
}

export function programEnvironment(): NodeJS.ProcessEnv {
  return running().at(-1) ?? process.env;
}

/** Makes `env` the program's environment until the returned function is called (once its program has settled). */
export function enterProgramEnvironment(env: NodeJS.ProcessEnv): () => void {
  const entry = { ...env };
  running().push(entry);
  return () => {
    const envs = running();
    const at = envs.indexOf(entry);
    if (at >= 0) envs.splice(at, 1);
  };
}
