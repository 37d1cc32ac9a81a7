import * as assert from "node:assert/strict";
import { RESOURCE_NAME_KEY } from "../../provider/framework/check";
import type { EngineMessage } from "../../testing/engine-log";
import {
  dynamicFrontDoor,
  type FrontDoor,
  type FrontDoorFactory,
  type ResourceRef,
} from "../../testing/front-door";
import {
  assertBuilt,
  ensurePackageLink,
  REPO_ROOT,
  withoutGpucloudEnv,
  type CheckResult,
  type DiffChanges,
  type DiffResult,
  type Props,
  type ReadResult,
} from "./server";

const PROVIDER_KEY = "__provider";

/** What the engine keeps for one resource between calls. */
export interface ResourceState {
  id: string;
  inputs: Props;
  outputs: Props;
}

export interface DiffExpectation {
  changes: DiffChanges;
  replaces?: string[];
}

export interface UpdateStep {
  inputs: Props;
  expect: DiffExpectation;
  /** Runs after the step is applied (and read back), with the new state. */
  then?: (state: ResourceState) => void | Promise<void>;
}

export interface LifecycleSpec {
  resource: string;
  name?: string;
  /** Inputs as a preview sees them, unknowns included: they must pass check. */
  preview?: Props;
  create: Props;
  /** Runs after create (and a read that must show no drift), with the new state. */
  afterCreate?: (state: ResourceState) => void | Promise<void>;
  updates?: UpdateStep[];
  /** Leave the last resource in place instead of deleting it (the test deletes it itself). */
  keep?: boolean;
}

export interface HarnessOptions {
  /** How requests reach the provider (default: Pulumi's dynamic-provider server). */
  frontDoor?: FrontDoorFactory;
  /** Serialized provider text per resource type name, e.g. `{ Instance: text }`: what the dynamic door sends. */
  providers?: Record<string, string>;
  /** Module part of the program's type token: `pulumi-nodejs:dynamic/<module>:<type>`. */
  module: string;
  /** Stack config sent with Configure (fully qualified keys); omit to send no Configure at all. */
  config?: Props;
  /** Working directory of the provider process: where a serialized provider resolves its `require`s (default: the repository). */
  cwd?: string;
  /** Environment of the provider process (default: this process's, without GPUCLOUD_* variables, so tests see only their own config). */
  env?: NodeJS.ProcessEnv;
  /** The program's resource classes hand their names to Check in `__resourceName`, as pulumi-gpucloud's do. */
  namesInInputs?: boolean;
}

function urnOf(type: string, name: string): string {
  return `urn:pulumi:stack::project::${type}::${name}`;
}

function sortedReplaces(diff: DiffResult): string[] {
  return [...diff.replaces].sort();
}

/**
 * Drives a provider through a front door, the way the engine does: through the dynamic door every request
 * carries `__provider` and results come back without it; through the native door the package's plugin sees
 * its own type tokens and the config as provider properties. Mirrors the calls of pulumi-go-provider's
 * `integration` package (check, diff, create, read, update, delete, lifecycle).
 */
export class Harness {
  private constructor(
    private readonly door: FrontDoor,
    private readonly options: HarnessOptions,
  ) {}

  static async start(options: HarnessOptions): Promise<Harness> {
    if (Object.values(options.providers ?? {}).some((text) => text.includes("pulumi-gpucloud"))) {
      assertBuilt();
      ensurePackageLink();
    }
    const open = options.frontDoor ?? dynamicFrontDoor();
    const door = await open({ cwd: options.cwd ?? REPO_ROOT, env: options.env ?? withoutGpucloudEnv() });
    try {
      if (options.config) await door.configure(options.config);
    } catch (err) {
      await door.close();
      throw err;
    }
    return new Harness(door, options);
  }

  stop(): Promise<void> {
    return this.door.close();
  }

  /** What the provider process wrote to stderr so far (its logs: the dynamic server's, the plugin's). */
  get stderr(): string {
    return this.door.stderr;
  }

  /** What the provider sent to the engine's log so far (the native door's; the dynamic door's is empty). */
  get engineMessages(): readonly EngineMessage[] {
    return this.door.engineMessages;
  }

  /** The URN under which the provider behind the door knows a resource of the program. */
  urn(resource: string, name = "test"): string {
    return this.ref(resource, name).urn;
  }

  /** The resource as the program registers it, admitted through the door: its type token and provider text. */
  private ref(resource: string, name = "test"): ResourceRef {
    const programType = `pulumi-nodejs:dynamic/${this.options.module}:${resource}`;
    const provider = this.options.providers?.[resource];
    const admitted = this.door.admit({
      urn: urnOf(programType, name),
      type: programType,
      inputs: provider === undefined ? {} : { [PROVIDER_KEY]: provider },
    });
    return { urn: urnOf(admitted.type, name), type: admitted.type, provider: admitted.provider };
  }

  /**
   * Check as the engine sends it for the resource named in `news` (`__resourceName`), or `test`: the
   * native door sees the name in the URN, the dynamic door in the inputs where the classes put it there.
   */
  check(resource: string, news: Props, olds: Props = {}): Promise<CheckResult> {
    const named = news[RESOURCE_NAME_KEY];
    const name = typeof named === "string" ? named : "test";
    const sent = this.options.namesInInputs ? { ...news, [RESOURCE_NAME_KEY]: name } : news;
    return this.door.check(this.ref(resource, name), olds, sent);
  }

  /** Checks and fails with every failure listed when there is any. */
  async checked(resource: string, news: Props, olds: Props = {}): Promise<Props> {
    const { inputs, failures } = await this.check(resource, news, olds);
    assert.deepEqual(failures, [], `check of ${resource} failed`);
    return inputs;
  }

  diff(resource: string, id: string, oldOutputs: Props, news: Props): Promise<DiffResult> {
    return this.door.diff(this.ref(resource), id, oldOutputs, news);
  }

  async create(resource: string, inputs: Props): Promise<ResourceState> {
    const { id, outputs } = await this.door.create(this.ref(resource), inputs);
    return { id, inputs, outputs };
  }

  read(resource: string, state: ResourceState): Promise<ReadResult> {
    return this.door.read(this.ref(resource), state.id, state.outputs, state.inputs);
  }

  /** Refresh: the state as the engine stores it after a read (empty id = the resource is gone). */
  async refresh(resource: string, state: ResourceState): Promise<ResourceState> {
    const result = await this.read(resource, state);
    return { id: result.id, outputs: result.outputs, inputs: result.inputs ?? state.inputs };
  }

  async update(resource: string, state: ResourceState, news: Props): Promise<ResourceState> {
    const outputs = await this.door.update(this.ref(resource), state.id, state.outputs, news);
    return { id: state.id, inputs: news, outputs };
  }

  delete(resource: string, state: ResourceState): Promise<void> {
    return this.door.delete(this.ref(resource), state.id, state.outputs);
  }

  /** Asserts that a refresh finds the resource unchanged and that the program's inputs show no diff. */
  async expectNoDrift(resource: string, state: ResourceState): Promise<ResourceState> {
    const refreshed = await this.refresh(resource, state);
    assert.equal(refreshed.id, state.id, `read of ${resource} ${state.id} reported it gone`);
    const diff = await this.diff(resource, refreshed.id, refreshed.outputs, state.inputs);
    assert.deepEqual(
      { changes: diff.changes, replaces: diff.replaces },
      { changes: "none", replaces: [] },
      `refresh of ${resource} ${state.id} shows drift`,
    );
    return { ...refreshed, inputs: state.inputs };
  }

  /**
   * Preview, create, read back, then each update (checked, diffed against the expectation, applied
   * in place or by create-then-delete replacement, read back), then delete.
   */
  async lifecycle(spec: LifecycleSpec): Promise<ResourceState> {
    const { resource } = spec;
    if (spec.preview) await this.checked(resource, spec.preview);
    let state = await this.create(resource, await this.checked(resource, spec.create));
    state = await this.expectNoDrift(resource, state);
    await spec.afterCreate?.(state);
    for (const [index, step] of (spec.updates ?? []).entries()) {
      const news = await this.checked(resource, step.inputs, state.inputs);
      const diff = await this.diff(resource, state.id, state.outputs, news);
      assert.deepEqual(
        { changes: diff.changes, replaces: sortedReplaces(diff) },
        { changes: step.expect.changes, replaces: [...(step.expect.replaces ?? [])].sort() },
        `update ${index + 1} of ${resource}: unexpected diff`,
      );
      if (diff.replaces.length > 0) {
        const replacement = await this.create(resource, news);
        await this.delete(resource, state);
        state = replacement;
      } else if (diff.changes !== "none") {
        state = await this.update(resource, state, news);
      }
      state = await this.expectNoDrift(resource, state);
      await step.then?.(state);
    }
    if (!spec.keep) await this.delete(resource, state);
    return state;
  }
}
