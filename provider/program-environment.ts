/**
 * The environment a program's data sources read their settings from (GPUCLOUD_BASE_URL, GPUCLOUD_API_KEY,
 * GPUCLOUD_REQUEST_LOG, ...). Under the Pulumi CLI the program and the provider share one environment;
 * `pulumi-gpucloud/testing` runs a program inside the caller's process with its own `env`, and enters it
 * here for as long as the program runs, so that its data sources see what the provider process sees.
 *
 * It also says who makes the program's component resources' children: the program itself, as under the
 * CLI, or the native plugin's Construct, when the harness plays a program whose package is the plugin's.
 *
 * Kept on a global symbol: the harness and the program may load two copies of this package. The newest
 * program still running decides; only when none is does this process's own environment apply.
 */
const KEY = Symbol.for("pulumi-gpucloud.programEnvironments");
/** The data-source calls under way in an entered environment (see trackProgramWork). */
const WORK = Symbol.for("pulumi-gpucloud.programWork");
/** Set in an environment whose program's components are constructed by the native plugin. */
const BY_PLUGIN = Symbol.for("pulumi-gpucloud.componentsByPlugin");

type Entry = NodeJS.ProcessEnv & { [WORK]?: Set<Promise<unknown>>; [BY_PLUGIN]?: boolean };
type Holder = { [KEY]?: Entry[] };

function running(): Entry[] {
  const holder = globalThis as Holder;
  return (holder[KEY] ??= []);
}

export function programEnvironment(): NodeJS.ProcessEnv {
  return running().at(-1) ?? process.env;
}

/** Whether the running program's components are constructed by the native plugin (never under the CLI). */
export function componentsConstructedByPlugin(): boolean {
  return (running().at(-1) as Entry | undefined)?.[BY_PLUGIN] === true;
}

/** An entered environment: `leave()` once its program has settled; `work()` settles with its data-source calls. */
export interface EnteredEnvironment {
  leave(): void;
  /** Settles (never rejects) once every data-source call made in this environment so far has settled. */
  work(): Promise<void>;
}

/**
 * Makes `env` the program's environment until `leave()` (once its program has settled). With
 * `componentsByPlugin`, the program's components register as remote ones, which the engine has the native
 * plugin construct, as a program written against the plugin's own SDK does.
 */
export function enterProgramEnvironment(
  env: NodeJS.ProcessEnv,
  options: { componentsByPlugin?: boolean } = {},
): EnteredEnvironment {
  const entry: Entry = { ...env };
  Object.defineProperty(entry, WORK, { value: new Set<Promise<unknown>>(), enumerable: false });
  Object.defineProperty(entry, BY_PLUGIN, { value: options.componentsByPlugin === true, enumerable: false });
  running().push(entry);
  return {
    leave: () => {
      const envs = running();
      const at = envs.indexOf(entry);
      if (at >= 0) envs.splice(at, 1);
    },
    work: async () => {
      while (entry[WORK]!.size > 0) await Promise.allSettled([...entry[WORK]!]);
    },
  };
}

/**
 * Counts a data-source call as its program's work, so the harness can wait for it: a program's
 * top-level code may start calls that nothing awaits, and their failures must not outlive the harness's
 * watch for them. Outside an entered environment (under the Pulumi CLI) it changes nothing.
 */
export function trackProgramWork<T>(work: Promise<T>): Promise<T> {
  const pending = (running().at(-1) as Entry | undefined)?.[WORK];
  if (pending) {
    pending.add(work);
    const forget = () => pending.delete(work);
    work.then(forget, forget);
  }
  return work;
}
