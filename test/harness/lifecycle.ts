import * as assert from "node:assert/strict";
import {
  assertBuilt,
  ensurePackageLink,
  reveal,
  startProviderServer,
  type CheckResult,
  type DiffChanges,
  type DiffResult,
  type ProviderServer,
  type ProviderServerOptions,
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

export interface HarnessOptions extends ProviderServerOptions {
  /** Serialized provider text per resource type name, e.g. `{ Instance: text }`. */
  providers: Record<string, string>;
  /** Module part of the type token: `pulumi-nodejs:dynamic/<module>:<type>`. */
  module: string;
  /** Stack config sent with Configure (fully qualified keys); omit to send no Configure at all. */
  config?: Props;
}

function withoutProvider(props: Props): Props {
  const { [PROVIDER_KEY]: _provider, ...rest } = props;
  return rest;
}

function sortedReplaces(diff: DiffResult): string[] {
  return [...diff.replaces].sort();
}

/**
 * Drives a dynamic provider through the real dynamic-provider server, the way the engine does:
 * every request carries `__provider`, results come back without it. Mirrors the calls of
 * pulumi-go-provider's `integration` package (check, diff, create, read, update, delete, lifecycle).
 */
export class Harness {
  private constructor(
    readonly server: ProviderServer,
    private readonly options: HarnessOptions,
  ) {}

  static async start(options: HarnessOptions): Promise<Harness> {
    if (Object.values(options.providers).some((text) => text.includes("pulumi-gpucloud"))) {
      assertBuilt();
      ensurePackageLink();
    }
    const server = await startProviderServer(options);
    if (options.config) await server.configure(options.config);
    return new Harness(server, options);
  }

  stop(): Promise<void> {
    return this.server.stop();
  }

  urn(resource: string, name = "test"): string {
    return `urn:pulumi:stack::project::pulumi-nodejs:dynamic/${this.options.module}:${resource}::${name}`;
  }

  private provider(resource: string): string {
    const text = this.options.providers[resource];
    if (!text) throw new Error(`no serialized provider registered for ${resource}`);
    return text;
  }

  /** As the engine sends them to a server that does not accept secrets: unwrapped, with `__provider`. */
  private withProvider(resource: string, props: Props): Props {
    return reveal({ ...props, [PROVIDER_KEY]: this.provider(resource) }) as Props;
  }

  async check(resource: string, news: Props, olds: Props = {}): Promise<CheckResult> {
    const oldProps = Object.keys(olds).length ? this.withProvider(resource, olds) : {};
    const result = await this.server.check(this.urn(resource), oldProps, this.withProvider(resource, news));
    return { ...result, inputs: withoutProvider(result.inputs) };
  }

  /** Checks and fails with every failure listed when there is any. */
  async checked(resource: string, news: Props, olds: Props = {}): Promise<Props> {
    const { inputs, failures } = await this.check(resource, news, olds);
    assert.deepEqual(failures, [], `check of ${resource} failed`);
    return inputs;
  }

  diff(resource: string, id: string, oldOutputs: Props, news: Props): Promise<DiffResult> {
    return this.server.diff(
      this.urn(resource),
      id,
      this.withProvider(resource, oldOutputs),
      this.withProvider(resource, news),
    );
  }

  async create(resource: string, inputs: Props): Promise<ResourceState> {
    const { id, outputs } = await this.server.create(this.urn(resource), this.withProvider(resource, inputs));
    return { id, inputs, outputs: withoutProvider(outputs) };
  }

  async read(resource: string, state: ResourceState): Promise<ReadResult> {
    const result = await this.server.read(
      this.urn(resource),
      state.id,
      this.withProvider(resource, state.outputs),
      this.withProvider(resource, state.inputs),
    );
    return {
      id: result.id,
      outputs: withoutProvider(result.outputs),
      inputs: result.inputs ? withoutProvider(result.inputs) : undefined,
    };
  }

  /** Refresh: the state as the engine stores it after a read (empty id = the resource is gone). */
  async refresh(resource: string, state: ResourceState): Promise<ResourceState> {
    const result = await this.read(resource, state);
    return { id: result.id, outputs: result.outputs, inputs: result.inputs ?? state.inputs };
  }

  async update(resource: string, state: ResourceState, news: Props): Promise<ResourceState> {
    const outputs = await this.server.update(
      this.urn(resource),
      state.id,
      this.withProvider(resource, state.outputs),
      this.withProvider(resource, news),
    );
    return { id: state.id, inputs: news, outputs: withoutProvider(outputs) };
  }

  delete(resource: string, state: ResourceState): Promise<void> {
    return this.server.delete(this.urn(resource), state.id, this.withProvider(resource, state.outputs));
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
