/**
 * The user's handle on one stack: `Stack.open` loads its program and state and starts its provider; its
 * operations (preview, up, refresh, destroy) take their turn and hand the work to the stack's engine
 * (engine/), which runs the steps as the Pulumi engine does.
 */
import * as path from "node:path";
import type { SteppedClock } from "./clock";
import { Engine, inTurn, type EngineEvent, type OperationResult } from "./engine";
import type { EngineMessage } from "./engine-log";
import { dynamicFrontDoor, type FrontDoor, type FrontDoorFactory } from "./front-door";
import type { PolicyPackOptions } from "./policy-pack";
import { Program } from "./program";
import { FileStore, MemoryStore, stateForUser, type StackState, type StateStore } from "./state";
import type { Props } from "./wire";

export interface StackOptions {
  /** The compiled program: a module exporting a function that returns the stack outputs. */
  program: string;
  project: string;
  stack: string;
  /** Stack config with fully qualified keys (`gpucloud:baseUrl`); wrap secrets with `secret()`. */
  config?: Props;
  /**
   * A file to keep the state in between Stack objects; its secret values are sealed with `passphrase`.
   * Absent: the state lives in this Stack object only.
   */
  stateFile?: string;
  /** Seals the state file's secrets; default: PULUMI_CONFIG_PASSPHRASE from `env`. */
  passphrase?: string;
  /** Where the provider process runs (a stored dynamic provider resolves its `require`s here); default: the program's folder. */
  cwd?: string;
  /** Environment of the provider process; default: this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** How resources reach their provider; default: Pulumi's dynamic-provider server. */
  frontDoor?: FrontDoorFactory;
  /**
   * Policy packs every preview and up runs, as `pulumi preview --policy-pack <path> --policy-pack-config
   * <config>` does: each pack is started for the operation through @pulumi/pulumi's run-policy-pack with
   * the stack config and whether the run is a preview in its environment, configured over Pulumi's
   * Analyzer protocol, and shown, as the engine shows them, each resource's checked inputs as the program
   * registers it (unchanged resources too, before any step on it; violations under its URN), then, once
   * every step succeeded, the whole stack. Violations are in the result's `policyViolations`. A mandatory
   * one fails a preview at its end, and an up before it changes anything: like the Pulumi CLI's `up`
   * (unless `skipPreview`), an up with policy packs previews first, in a pack process of its own, and stops
   * there on a mandatory violation; one found only in the update itself stops the update at that resource,
   * before its step, and nothing new starts (or, for the stack as a whole, fails it after its changes).
   * Resources registered side by side are analysed side by side, where the engine may take them one at a
   * time: a pack must hold either way. Remediations are not applied.
   */
  policyPacks?: PolicyPackOptions[];
  /**
   * The emulator, when it was started with `timeScale: 0`: while a create, update or delete waits on the
   * cloud (an instance booting, stopping, going away), the harness moves its clock, 10 simulated seconds
   * at a time, and stops as soon as no step is in flight. Previews and refreshes never move it, so the
   * clock moves between operations only when the test moves it.
   */
  clock?: SteppedClock;
  onEvent?: (event: EngineEvent) => void;
}

type OpenedOptions = StackOptions & { config: Props; cwd: string; env: NodeJS.ProcessEnv };

/** One stack: its program, its state and one provider process for every operation. */
export class Stack {
  private closed = false;

  private constructor(
    private readonly options: OpenedOptions,
    private readonly engine: Engine,
  ) {}

  /** Loads the program and the state and starts the provider; every failure is a rejection. */
  static async open(options: StackOptions): Promise<Stack> {
    const program = path.resolve(options.program);
    const full: OpenedOptions = {
      ...options,
      program,
      config: options.config ?? {},
      cwd: path.resolve(options.cwd ?? path.dirname(program)),
      env: options.env ?? process.env,
    };
    const store = stateStore(full);
    const state = store.load(options.project, options.stack);
    // Loading runs the program's top-level code under the global mocks: it takes its turn as operations do.
    const loaded = await inTurn(() => Program.load(program, full));
    const door = await openDoor(full);
    return new Stack(full, new Engine(full, loaded, store, door, state));
  }

  /**
   * Like `pulumi config set`: the next operations run the program with `config`, and a new provider
   * process is configured with it (as each run of the Pulumi CLI starts its own).
   */
  setConfig(config: Props): Promise<void> {
    return this.operate(async () => {
      // The new provider first: when it cannot start, the stack keeps the old one and its config.
      const door = await openDoor({ ...this.options, config });
      await this.engine.replaceDoor(door, config);
    });
  }

  /**
   * The state as it was last saved, a copy: secret values wrapped (`isSecret`), as in results, and
   * named by `secretOutputs`.
   */
  get current(): StackState {
    return stateForUser(this.engine.state);
  }

  /** What the provider process wrote to stderr so far. */
  get providerStderr(): string {
    return this.engine.door.stderr;
  }

  /** What the provider sent to the engine's log so far (through the native door; see FrontDoor). */
  get engineMessages(): readonly EngineMessage[] {
    return this.engine.door.engineMessages;
  }

  /** Stops the provider process; the state stays where it is. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.engine.close();
  }

  /**
   * Runs the program with unknowns and reports what `up` would do; changes nothing. With `refresh`
   * (`pulumi preview --refresh`), the plan is made against the resources as read back from the cloud, so
   * drift shows as the changes that would repair it; the refreshed state is not saved.
   */
  preview(options: { refresh?: boolean } = {}): Promise<OperationResult> {
    return this.operate(() => this.engine.preview(options));
  }

  /**
   * Runs the program and brings the cloud and the state to it; removes what the program no longer declares.
   * With `refresh` (`pulumi up --refresh`), the state is refreshed first, so drift is repaired too. With
   * `skipPreview` (`pulumi up --skip-preview`), the policy packs judge the update alone, with no preview first.
   */
  up(options: { refresh?: boolean; skipPreview?: boolean } = {}): Promise<OperationResult> {
    return this.operate(() => this.engine.up(options));
  }

  /** Reads every resource back from the cloud and stores what it finds: drift shows as `update`, gone as `delete`. */
  refresh(): Promise<OperationResult> {
    return this.operate(() => this.engine.refresh());
  }

  /** Deletes every resource, dependents first; resources with no dependency between them go in parallel. */
  destroy(): Promise<OperationResult> {
    return this.operate(() => this.engine.destroy());
  }

  private operate<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed)
      return Promise.reject(new Error("The stack is closed: open it again to run operations."));
    return inTurn(work);
  }
}

function stateStore(options: StackOptions & { env: NodeJS.ProcessEnv }): StateStore {
  if (options.stateFile === undefined) return new MemoryStore();
  const passphrase = options.passphrase ?? options.env.PULUMI_CONFIG_PASSPHRASE;
  if (!passphrase) {
    throw new Error(
      `Could not open the state file ${options.stateFile}: it needs a passphrase to seal its secrets. ` +
        "Give Stack.open a passphrase (or set PULUMI_CONFIG_PASSPHRASE), or leave out stateFile to keep the state in memory.",
    );
  }
  return new FileStore(options.stateFile, passphrase);
}

/** A front door, configured; closed again when configuring fails. */
async function openDoor(options: {
  frontDoor?: FrontDoorFactory;
  cwd: string;
  env: NodeJS.ProcessEnv;
  config: Props;
}): Promise<FrontDoor> {
  const door = await (options.frontDoor ?? dynamicFrontDoor())({ cwd: options.cwd, env: options.env });
  try {
    await door.configure(options.config);
  } catch (err) {
    await door.close();
    throw new Error(`Could not configure the provider: ${(err as Error).message}`);
  }
  return door;
}
