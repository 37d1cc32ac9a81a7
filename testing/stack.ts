/**
 * A miniature Pulumi engine for one stack: preview, up, refresh, preview --refresh and destroy, with the
 * program run under Pulumi's runtime mocks and every resource handled by a real provider process over gRPC
 * through a front door (front-door.ts), with the calls the Pulumi engine makes (check, diff, create, update,
 * read, delete). It follows the engine's rules where this package depends on them: create-before-delete
 * replacement, dependents deleted first, and resources the provider made but could not finish
 * (ErrorResourceInitFailed) kept in the state and finished by the next `up`.
 */
import * as path from "node:path";
import { ClockDriver, type SteppedClock } from "./clock";
import type { EngineMessage } from "./engine-log";
import { dynamicFrontDoor, type FrontDoor, type FrontDoorFactory, type ResourceRef } from "./front-door";
import { enterProgramEnvironment } from "../provider/program-environment";
import {
  Program,
  secretKeys,
  sentence,
  stringConfig,
  urnOf,
  type Registration,
  type Resolution,
} from "./program";
import {
  failureList,
  InputPropertiesFailedError,
  ProviderCallError,
  ResourceInitFailedError,
  type CheckFailure,
  type DiffResult,
  type ReadResult,
} from "./provider-process";
import { deploymentStopped, ResourceMonitor } from "./resource-monitor";
import {
  dependencyLevels,
  FileStore,
  MemoryStore,
  stateForUser,
  type ResourceRecord,
  type StackState,
  type StateStore,
} from "./state";
import {
  PolicyRun,
  PolicyViolationError,
  type AnalyzedResource,
  type PolicyPackOptions,
  type PolicyViolation,
} from "./policy-pack";
import { holdsSecret, isSecret, reveal, wrapSecrets, type Props } from "./wire";

export type Operation = "preview" | "up" | "refresh" | "destroy";
/** What happens (or happened) to one resource; a refresh reports drift as `update` and a gone resource as `delete`. */
export type Op = "create" | "update" | "replace" | "delete" | "same";

export interface PropertyChange {
  name: string;
  old?: unknown;
  new?: unknown;
  secret: boolean;
  /** This change is why the resource is replaced. */
  replaces: boolean;
}

export interface Step {
  op: Op;
  urn: string;
  type: string;
  name: string;
  id?: string;
  changes: PropertyChange[];
  /** The provider made the resource but could not finish it: why (it stays in the state with these). */
  initErrors?: string[];
}

export interface OperationResult {
  operation: Operation;
  steps: Step[];
  /** Stack outputs: secrets wrapped (see `isSecret`), preview unknowns as UNKNOWN. */
  outputs: Props;
  /**
   * What the stack's policy packs reported (`policyPacks`): advisory violations, as a preview or up that
   * succeeds has only those. Mandatory ones fail the operation (see OperationError). Empty for refresh and destroy.
   */
  policyViolations: PolicyViolation[];
  durationMs: number;
}

export type EngineEvent =
  | { kind: "step-start"; operation: Operation; step: Step }
  | { kind: "step-done"; operation: Operation; step: Step; durationMs: number }
  | { kind: "step-failed"; operation: Operation; step: Step; error: StepError }
  /** The program failed after its operation had already stopped on another failure. */
  | { kind: "late-failure"; operation: Operation; error: Error };

/** One step failed; `cause` is the provider's error (a ResourceInitFailedError when it made the resource). */
export class StepError extends Error {
  override readonly name = "StepError";
  constructor(
    message: string,
    readonly step: Step,
    override readonly cause: Error,
  ) {
    super(message);
  }
}

/** A resource's inputs failed its provider's check, before any call to the cloud: each failure names its input. */
export class CheckFailedError extends Error {
  override readonly name = "CheckFailedError";
  constructor(
    /** The resource's name in the program. */
    readonly resource: string,
    readonly type: string,
    readonly failures: CheckFailure[],
  ) {
    super(`${resource} (${typeName(type)}) failed its check: ${failureList(failures)}`);
  }
}

/**
 * An operation failed; the state keeps whatever was done before the failure. Mandatory policy violations
 * are a failure too: a PolicyViolationError among `failures`, and every violation reported (advisory ones
 * included) in `policyViolations`.
 */
export class OperationError extends Error {
  override readonly name = "OperationError";
  /**
   * A failure left its resource's status unknown (see ProviderCallError): the Pulumi CLI then reports the
   * update as possibly corrupt (`maybeCorrupt` in its summary and JSON output).
   */
  readonly maybeCorrupt: boolean;

  constructor(
    readonly operation: Operation,
    readonly failures: Error[],
    readonly steps: Step[],
    readonly policyViolations: PolicyViolation[] = [],
  ) {
    // Resources that fail alike (every instance of a fleet) give one message each.
    super(`${operation} failed: ${[...new Set(failures.map((f) => f.message))].join("; ")}`);
    this.maybeCorrupt = failures.some(leavesStatusUnknown);
  }
}

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

/** What one preview or up has seen and done so far. */
interface Deployment {
  operation: "preview" | "up";
  /** The operation's policy packs, when the stack has any. */
  policies?: PolicyRun;
  /** Every resource the program registered, as the policy packs see the stack at the end. */
  news: AnalyzedResource[];
  steps: Step[];
  /** State URNs the program registered. */
  seen: Set<string>;
  /** The new state's records, in the order their resources finished. */
  registered: ResourceRecord[];
  /** Old records replaced by new ones, deleted at the end. */
  replaced: ResourceRecord[];
  /** Old records deleted before their replacement was made (deleteBeforeReplace). */
  deletedFirst: Set<ResourceRecord>;
  /** Failures of what a provider's Construct registered: the first is why its component failed. */
  constructFailures: Error[];
}

/** Pulumi's runtime mocks are global to the process: operations (and program loads) of every Stack take turns. */
let turn: Promise<unknown> = Promise.resolve();
function inTurn<T>(work: () => Promise<T>): Promise<T> {
  const mine = turn.then(work, work);
  turn = mine.catch(() => undefined);
  return mine;
}

/** One stack: its program, its state and one provider process for every operation. */
export class Stack {
  private closed = false;
  /** The engine's resource monitor a provider's Construct registers with, started at the first component. */
  private monitor?: Promise<ResourceMonitor>;
  /** The program environments of this stack's runs that have not settled yet (see run). */
  private readonly environments = new Set<() => void>();
  private readonly clock: ClockDriver | undefined;

  private constructor(
    private readonly options: StackOptions & { config: Props; cwd: string; env: NodeJS.ProcessEnv },
    private readonly program: Program,
    private readonly store: StateStore,
    private door: FrontDoor,
    private state: StackState,
  ) {
    this.clock = options.clock && new ClockDriver(options.clock);
  }

  /** Loads the program and the state and starts the provider; every failure is a rejection. */
  static async open(options: StackOptions): Promise<Stack> {
    const program = path.resolve(options.program);
    const full = {
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
    return new Stack(full, loaded, store, door, state);
  }

  /**
   * Like `pulumi config set`: the next operations run the program with `config`, and a new provider
   * process is configured with it (as each run of the Pulumi CLI starts its own).
   */
  setConfig(config: Props): Promise<void> {
    return this.operate(async () => {
      // The new provider first: when it cannot start, the stack keeps the old one and its config.
      const door = await openDoor({ ...this.options, config });
      await this.door.close();
      this.door = door;
      this.options.config = config;
    });
  }

  /**
   * The state as it was last saved, a copy: secret values wrapped (`isSecret`), as in results, and
   * named by `secretOutputs`.
   */
  get current(): StackState {
    return stateForUser(this.state);
  }

  /** What the provider process wrote to stderr so far. */
  get providerStderr(): string {
    return this.door.stderr;
  }

  /** What the provider sent to the engine's log so far (through the native door; see FrontDoor). */
  get engineMessages(): readonly EngineMessage[] {
    return this.door.engineMessages;
  }

  /** Stops the provider process; the state stays where it is. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.program.dispose();
    // A run whose program never settles (outputs waiting on a failed resource) gives its environment back here.
    for (const leave of this.environments) leave();
    this.environments.clear();
    await this.door.close();
    await (await this.monitor?.catch(() => undefined))?.close();
  }

  /**
   * Runs the program with unknowns and reports what `up` would do; changes nothing. With `refresh`
   * (`pulumi preview --refresh`), the plan is made against the resources as read back from the cloud, so
   * drift shows as the changes that would repair it; the refreshed state is not saved.
   */
  preview(options: { refresh?: boolean } = {}): Promise<OperationResult> {
    return this.operate(async () => {
      if (!options.refresh) return this.deploy("preview");
      const saved = this.state;
      const read = await this.readAll();
      if (read.failures.length > 0) throw new OperationError("preview", read.failures, read.steps);
      this.state = { ...saved, resources: read.resources };
      try {
        return await this.deploy("preview");
      } finally {
        this.state = saved;
      }
    });
  }

  /**
   * Runs the program and brings the cloud and the state to it; removes what the program no longer declares.
   * With `refresh` (`pulumi up --refresh`), the state is refreshed first, so drift is repaired too. With
   * `skipPreview` (`pulumi up --skip-preview`), the policy packs judge the update alone, with no preview first.
   */
  up(options: { refresh?: boolean; skipPreview?: boolean } = {}): Promise<OperationResult> {
    return this.operate(async () => {
      if (options.refresh) {
        const read = await this.readAll();
        this.save({ ...this.state, resources: read.resources });
        if (read.failures.length > 0) throw new OperationError("up", read.failures, read.steps);
      }
      if (this.options.policyPacks?.length && !options.skipPreview) await this.previewBeforeUp();
      return this.deploy("up");
    });
  }

  /** The preview the Pulumi CLI's `up` runs first: its policy violations stop the up before any change. */
  private async previewBeforeUp(): Promise<void> {
    try {
      await this.deploy("preview");
    } catch (err) {
      if (!(err instanceof OperationError)) throw err;
      throw new OperationError("up", err.failures, [], err.policyViolations);
    }
  }

  /** Reads every resource back from the cloud and stores what it finds: drift shows as `update`, gone as `delete`. */
  refresh(): Promise<OperationResult> {
    return this.operate(async () => {
      const started = Date.now();
      const { steps, failures, resources } = await this.readAll();
      this.save({ ...this.state, resources });
      if (failures.length > 0) throw new OperationError("refresh", failures, steps);
      return result("refresh", steps, wrapSecrets(this.state.outputs, this.state.secretOutputs), started, []);
    });
  }

  /** Deletes every resource, dependents first; resources with no dependency between them go in parallel. */
  destroy(): Promise<OperationResult> {
    return this.operate(async () => {
      const started = Date.now();
      const steps: Step[] = [];
      const { failures, survivors } = await this.deleteAll("destroy", this.state.resources, steps);
      this.save(
        failures.length > 0
          ? { ...this.state, resources: survivors }
          : { ...this.state, resources: [], outputs: {}, secretOutputs: [] },
      );
      if (failures.length > 0) throw new OperationError("destroy", failures, steps);
      return result("destroy", steps, {}, started, []);
    });
  }

  private operate<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed)
      return Promise.reject(new Error("The stack is closed: open it again to run operations."));
    return inTurn(work);
  }

  /** Every resource read back, in the state's order; one that fails to read stays as it was. */
  private async readAll(): Promise<{ steps: Step[]; failures: Error[]; resources: ResourceRecord[] }> {
    const steps: Step[] = [];
    const failures: Error[] = [];
    const resources: ResourceRecord[] = [];
    await Promise.all(
      this.state.resources.map(async (record) => {
        try {
          const refreshed = await this.readBack(record, steps);
          if (refreshed) resources.push(refreshed);
        } catch (err) {
          failures.push(err as Error);
          resources.push(record);
        }
      }),
    );
    // Reads finish in any order; report and keep them in the state's order.
    const order = new Map(this.state.resources.map((r, i) => [r.urn, i]));
    resources.sort((a, b) => order.get(a.urn)! - order.get(b.urn)!);
    steps.sort((a, b) => order.get(a.urn)! - order.get(b.urn)!);
    return { steps, failures, resources };
  }

  private async deploy(operation: "preview" | "up"): Promise<OperationResult> {
    const packs = this.options.policyPacks ?? [];
    if (packs.length === 0) return this.deployWith(operation, undefined);
    const { project, stack, config, env } = this.options;
    const policies = await PolicyRun.start(packs, {
      project,
      stack,
      config,
      env,
      dryRun: operation === "preview",
    });
    try {
      return await this.deployWith(operation, policies);
    } finally {
      await policies.stop();
    }
  }

  private async deployWith(
    operation: "preview" | "up",
    policies: PolicyRun | undefined,
  ): Promise<OperationResult> {
    const started = Date.now();
    const preview = operation === "preview";
    const steps: Step[] = [];
    const deployment: Deployment = {
      operation,
      policies,
      news: [],
      steps,
      seen: new Set(),
      registered: [],
      replaced: [],
      deletedFirst: new Set(),
      constructFailures: [],
    };
    const { registered, replaced } = deployment;
    // The program's data sources see `env`, as the provider process does (under the CLI both share one),
    // until the program has settled: a run that stopped early may still call them.
    const entered = enterProgramEnvironment(this.options.env, {
      componentsByPlugin: this.door.construct !== undefined,
    });
    const leave = () => {
      entered.leave();
      this.environments.delete(leave);
    };
    this.environments.add(leave);
    const run = await this.program
      .run({
        project: this.options.project,
        stack: this.options.stack,
        preview,
        config: this.options.config,
        register: (registration) => this.registerAndAnalyze(deployment, registration),
        registerOutputs: (urn, outputs) => this.registerOutputs(deployment, urn, outputs),
        onLateFailure: (error) => this.options.onEvent?.({ kind: "late-failure", operation, error }),
      })
      .catch((err: unknown) => {
        leave();
        throw err;
      });
    void run.settled.then(leave);
    // A Construct the run left behind registers nothing more into this operation.
    void this.monitor?.then(
      (monitor) => monitor.serve(undefined),
      () => undefined,
    );
    const removed = this.state.resources.filter((r) => !deployment.seen.has(r.urn));
    const violations = () => policies?.violations ?? [];
    if (preview) {
      for (const r of removed) steps.push(stepOf("delete", r));
      if (run.errors.length > 0) throw new OperationError(operation, run.errors, steps, violations());
      await this.analyzeStack(deployment);
      return result(operation, steps, run.outputs, started, violations());
    }
    const failed = run.errors.length > 0;
    // Replaced resources go after their replacements were made (Pulumi's create-before-delete), even when
    // another step failed.
    const replacements = await this.deleteAll(operation, replaced, steps);
    // After a failure nothing is removed: the program may not have registered everything it declares.
    const kept = new Set(registered.map((r) => r.urn));
    const untouched = this.state.resources.filter((r) => !kept.has(r.urn) && !deployment.deletedFirst.has(r));
    const removals = failed
      ? { failures: [], survivors: untouched }
      : await this.deleteAll(operation, removed, steps);
    const failures = [...run.errors, ...replacements.failures, ...removals.failures];
    this.save({
      ...this.state,
      resources: [...registered, ...removals.survivors],
      outputs: failed ? this.state.outputs : (reveal(run.outputs) as Props),
      secretOutputs: failed
        ? this.state.secretOutputs
        : Object.keys(run.outputs).filter((k) => holdsSecret(run.outputs[k])),
    });
    if (failures.length > 0) throw new OperationError(operation, failures, steps, violations());
    await this.analyzeStack(deployment);
    return result(operation, steps, run.outputs, started, violations());
  }

  /**
   * The policy packs' look at the whole stack, once every step is done; their mandatory violations, of
   * this look or of single resources in a preview, fail the operation.
   */
  private async analyzeStack({ operation, policies, news, steps }: Deployment): Promise<void> {
    if (!policies) return;
    await policies.analyzeStack(news);
    const mandatory = policies.mandatory;
    if (mandatory.length === 0) return;
    throw new OperationError(operation, [new PolicyViolationError(mandatory)], steps, policies.violations);
  }

  /** A resource as the policy packs see it: under its state URN and type, with `outputs` (or inputs) as given. */
  private analyzed(registration: Registration, properties: Props, provider?: string): AnalyzedResource {
    const stateUrns = (urns: string[]) => urns.map((u) => stateUrn(u, this.door));
    return {
      urn: stateUrn(registration.urn, this.door),
      type: registration.custom ? this.door.stateType(registration.type) : registration.type,
      name: registration.name,
      // The engine shows a dynamic resource with its serialized provider.
      properties: provider === undefined ? properties : { ...properties, __provider: provider },
      additionalSecretOutputs: registration.additionalSecretOutputs,
      dependencies: stateUrns(registration.dependencies),
      propertyDependencies: Object.fromEntries(
        Object.entries(registration.propertyDependencies).map(([name, urns]) => [name, stateUrns(urns)]),
      ),
      ...this.parentOf(registration),
    };
  }

  /**
   * Registers one resource and shows it to the policy packs' look at the whole stack. A remote component
   * is shown as its Construct registered it, not a second time as the program asked for it. The engine
   * shows a component with the outputs it registers (none until it does), not its inputs.
   */
  private async registerAndAnalyze(deployment: Deployment, registration: Registration): Promise<Resolution> {
    const resolution = await this.register(deployment, registration);
    if (registration.remote) return resolution;
    const provider = registration.custom ? this.door.admit(registration).provider : undefined;
    const outputs = registration.custom ? resolution.outputs : {};
    deployment.news.push(this.analyzed(registration, outputs, provider));
    return resolution;
  }

  /** One resource of the program: check, diff against the state, then create, update, replace or nothing. */
  private async register(deployment: Deployment, registration: Registration): Promise<Resolution> {
    if (registration.remote) return this.construct(deployment, registration);
    if (!registration.custom) return this.registerComponent(deployment, registration);
    const admitted = this.door.admit(registration);
    const urn = stateUrn(registration.urn, this.door);
    const ref: ResourceRef = { urn, type: admitted.type, provider: admitted.provider };
    deployment.seen.add(ref.urn);
    const news = admitted.inputs;
    const secretNames = [
      ...new Set([
        ...registration.additionalSecretOutputs,
        ...Object.keys(news).filter((k) => holdsSecret(news[k])),
      ]),
    ];
    const old = this.state.resources.find((r) => r.urn === ref.urn);
    const checked = await this.check(ref, registration.name, news, old);
    await this.analyze(deployment, registration, wrapSecrets(checked, secretNames), ref.provider);
    const diff = old
      ? await this.door
          .diff(ref, old.id, wrapSecrets(old.outputs, old.secretOutputs), wrapSecrets(checked, secretNames))
          .catch(failed("diff", registration.name, ref.type))
      : undefined;
    const op = planned(old, diff);
    const step: Step = {
      op,
      urn: ref.urn,
      type: ref.type,
      name: registration.name,
      id: old?.id,
      changes: old && op !== "same" ? changes(old.inputs, checked, secretNames, diff!.replaces) : [],
    };
    deployment.steps.push(step);
    const record = (id: string, outputs: Props, initErrors?: string[]): Resolution => {
      const names = [
        ...new Set([...secretNames, ...Object.keys(outputs).filter((k) => holdsSecret(outputs[k]))]),
      ];
      const next: ResourceRecord = {
        urn: ref.urn,
        type: ref.type,
        name: registration.name,
        id,
        ...(ref.provider !== undefined ? { provider: ref.provider } : {}),
        inputs: checked,
        outputs: reveal(outputs) as Props,
        secretOutputs: names,
        dependencies: registration.dependencies.map((u) => stateUrn(u, this.door)),
        ...this.parentOf(registration),
        ...(initErrors ? { initErrors } : {}),
      };
      deployment.registered.push(next);
      return { id, outputs: wrapSecrets(next.outputs, names) };
    };
    if (deployment.operation === "preview") return previewed(op, old, checked, secretNames);
    if (op === "same") return record(old!.id, wrapSecrets(old!.outputs, old!.secretOutputs));
    try {
      const done = await this.apply(deployment.operation, step, () =>
        this.change(deployment, op, ref, old, wrapSecrets(checked, secretNames), diff),
      );
      step.id = done.id;
      return record(done.id, done.outputs);
    } catch (err) {
      const init =
        err instanceof StepError && err.cause instanceof ResourceInitFailedError ? err.cause : undefined;
      if (!init) throw err;
      // Pulumi keeps the resource with its init errors; an update keeps its id (UpdateResponse has none).
      step.id = op === "update" ? old!.id : init.id;
      step.initErrors = init.reasons;
      record(step.id, init.outputs, init.reasons);
      throw err;
    }
  }

  private parentOf(registration: Registration): { parent?: string } {
    return registration.parent ? { parent: stateUrn(registration.parent, this.door) } : {};
  }

  /**
   * A component resource made in the program: the engine calls no provider for it, shows the policy packs
   * its inputs as it does a resource's, before its step (its children wait for that step), and keeps its
   * inputs and the outputs it registers once its children are declared (registerOutputs).
   */
  private async registerComponent(deployment: Deployment, registration: Registration): Promise<Resolution> {
    const urn = stateUrn(registration.urn, this.door);
    deployment.seen.add(urn);
    await this.analyze(deployment, registration, registration.inputs, undefined);
    const inputs = reveal(registration.inputs) as Props;
    const secretNames = Object.keys(registration.inputs).filter((k) => holdsSecret(registration.inputs[k]));
    const old = this.state.resources.find((r) => r.urn === urn);
    const found = old ? changes(old.inputs, inputs, secretNames, []) : [];
    const op: Op = !old ? "create" : found.length > 0 ? "update" : "same";
    deployment.steps.push({ op, urn, type: registration.type, name: registration.name, changes: found });
    if (deployment.operation === "up") {
      deployment.registered.push({
        urn,
        type: registration.type,
        name: registration.name,
        id: "",
        component: true,
        inputs,
        outputs: old?.outputs ?? {},
        secretOutputs: [...new Set([...secretNames, ...(old?.secretOutputs ?? [])])],
        dependencies: registration.dependencies.map((u) => stateUrn(u, this.door)),
        ...this.parentOf(registration),
      });
    }
    return { outputs: registration.inputs };
  }

  /** The outputs a component registered: its record keeps them (secrets by name, as a resource's), the policy packs see them. */
  private registerOutputs(deployment: Deployment, programUrn: string, outputs: Props): void {
    const urn = stateUrn(programUrn, this.door);
    const shown = deployment.news.find((r) => r.urn === urn);
    if (shown) shown.properties = outputs;
    const record = deployment.registered.find((r) => r.urn === urn);
    if (!record) return;
    record.outputs = reveal(outputs) as Props;
    record.secretOutputs = [
      ...new Set([...record.secretOutputs, ...Object.keys(outputs).filter((k) => holdsSecret(outputs[k]))]),
    ];
  }

  /**
   * A remote component: its provider's Construct makes it, registering the component and its children
   * with this engine's resource monitor, each child planned and applied as a program's resource is.
   * A failure of what it registered is the component's failure.
   */
  private async construct(deployment: Deployment, registration: Registration): Promise<Resolution> {
    const { construct } = this.door;
    if (!construct) {
      throw new Error(
        `${registration.name} (${typeName(registration.type)}) is a component for a provider plugin to construct, ` +
          "and Pulumi's dynamic-provider server constructs none: open the stack with frontDoor: nativeFrontDoor().",
      );
    }
    const monitor = await this.resourceMonitor();
    const { project, stack, config } = this.options;
    const failedBefore = deployment.constructFailures.length;
    monitor.serve({
      urnOf: (type, name, parent) => urnOf({ project, stack }, type, name, parent),
      register: (child) => this.registerConstructed(deployment, child),
      registerOutputs: (urn, outputs) => this.registerOutputs(deployment, urn, outputs),
    });
    try {
      const made = await construct.call(this.door, {
        project,
        stack,
        config: stringConfig(config),
        configSecretKeys: secretKeys(config),
        dryRun: deployment.operation === "preview",
        monitorEndpoint: monitor.endpoint,
        type: registration.type,
        name: registration.name,
        ...(registration.parent ? { parent: registration.parent } : {}),
        inputs: registration.inputs,
        dependencies: registration.dependencies,
      });
      return { outputs: made.state };
    } catch (err) {
      const cause = deployment.constructFailures[failedBefore];
      if (cause) throw cause;
      if (err instanceof InputPropertiesFailedError) {
        throw new CheckFailedError(registration.name, registration.type, err.failures);
      }
      throw new Error(
        `construct of ${registration.name} (${typeName(registration.type)}) failed: ${(err as Error).message}`,
      );
    }
  }

  /** A child a Construct registered: after a failure, nothing new starts, as for a program's resources. */
  private async registerConstructed(deployment: Deployment, child: Registration): Promise<Resolution> {
    if (deployment.constructFailures.length > 0) throw deploymentStopped();
    try {
      return await this.registerAndAnalyze(deployment, child);
    } catch (err) {
      deployment.constructFailures.push(err as Error);
      throw err;
    }
  }

  private resourceMonitor(): Promise<ResourceMonitor> {
    this.monitor ??= ResourceMonitor.start();
    return this.monitor;
  }

  /** Create, update or replace one resource; a replacement's old resource is deleted at the end of the operation. */
  private async change(
    deployment: Deployment,
    op: Op,
    ref: ResourceRef,
    old: ResourceRecord | undefined,
    inputs: Props,
    diff: DiffResult | undefined,
  ): Promise<{ id: string; outputs: Props }> {
    if (op === "update") {
      const olds = wrapSecrets(old!.outputs, old!.secretOutputs);
      return { id: old!.id, outputs: await this.door.update(ref, old!.id, olds, inputs) };
    }
    const deleteFirst = op === "replace" && diff!.deleteBeforeReplace;
    if (deleteFirst) {
      await this.door.delete(refOf(old!), old!.id, wrapSecrets(old!.outputs, old!.secretOutputs));
      deployment.deletedFirst.add(old!);
    }
    // The old resource goes once its replacement exists, even one the provider could not finish.
    const superseded = () => op === "replace" && !deleteFirst && deployment.replaced.push(old!);
    try {
      const created = await this.door.create(ref, inputs);
      superseded();
      return created;
    } catch (err) {
      if (err instanceof ResourceInitFailedError) superseded();
      throw err;
    }
  }

  /**
   * The policy packs' look at one resource's checked inputs, before anything is done to it. In an up, a
   * mandatory violation makes the resource invalid: the up stops there, as the engine's does.
   */
  private async analyze(
    deployment: Deployment,
    registration: Registration,
    inputs: Props,
    provider: string | undefined,
  ): Promise<void> {
    const blocking = await deployment.policies?.analyze(this.analyzed(registration, inputs, provider));
    if (blocking?.length && deployment.operation === "up") throw new PolicyViolationError(blocking);
  }

  private async check(
    ref: ResourceRef,
    name: string,
    news: Props,
    old: ResourceRecord | undefined,
  ): Promise<Props> {
    const olds = old ? wrapSecrets(old.inputs, old.secretOutputs) : {};
    const checked = await this.door.check(ref, olds, news).catch(failed("check", name, ref.type));
    if (checked.failures.length > 0) throw new CheckFailedError(name, ref.type, checked.failures);
    return reveal(checked.inputs) as Props;
  }

  /**
   * A resource read back. The provider may answer with another id (Pulumi's refresh allows that), with no
   * id (the resource is gone), or with init errors (it is there but unfinished: kept, with them).
   */
  private async readBack(record: ResourceRecord, steps: Step[]): Promise<ResourceRecord | undefined> {
    // A component has no provider to read it: it stays as it is.
    if (record.component) {
      steps.push(stepOf("same", record));
      return record;
    }
    let read: ReadResult;
    let initErrors: string[] | undefined;
    try {
      read = await this.door.read(
        refOf(record),
        record.id,
        wrapSecrets(record.outputs, record.secretOutputs),
        wrapSecrets(record.inputs, record.secretOutputs),
      );
    } catch (err) {
      if (!(err instanceof ResourceInitFailedError)) {
        throw new Error(
          `read of ${record.name} (${typeName(record.type)}) failed: ${(err as Error).message}`,
          { cause: err },
        );
      }
      read = { id: err.id || record.id, outputs: err.outputs };
      initErrors = err.reasons;
    }
    if (read.id === "") {
      steps.push(stepOf("delete", record));
      return undefined;
    }
    const outputs = reveal(read.outputs) as Props;
    const secretOutputs = [
      ...new Set([
        ...record.secretOutputs,
        ...Object.keys(read.outputs).filter((k) => holdsSecret(read.outputs[k])),
      ]),
    ];
    const found = changes(record.outputs, outputs, secretOutputs, []);
    const op = found.length > 0 || read.id !== record.id ? "update" : "same";
    steps.push({ ...stepOf(op, record), id: read.id, changes: found, ...(initErrors ? { initErrors } : {}) });
    const { initErrors: _cleared, ...rest } = record;
    return {
      ...rest,
      id: read.id,
      outputs,
      inputs: read.inputs ? (reveal(read.inputs) as Props) : record.inputs,
      secretOutputs,
      ...(initErrors ? { initErrors } : {}),
    };
  }

  /**
   * Deletes `records` in reverse dependency order, stopping after a level with a failure; `survivors`
   * are the records not deleted, which stay in the state.
   */
  private async deleteAll(
    operation: Operation,
    records: ResourceRecord[],
    steps: Step[],
  ): Promise<{ failures: Error[]; survivors: ResourceRecord[] }> {
    const failures: Error[] = [];
    const deleted = new Set<ResourceRecord>();
    for (const level of dependencyLevels(records).reverse()) {
      await Promise.all(
        level.map(async (record) => {
          const step = stepOf("delete", record);
          steps.push(step);
          try {
            await this.apply(operation, step, async () => {
              // A component has nothing to delete but its record.
              if (record.component) return;
              await this.door.delete(
                refOf(record),
                record.id,
                wrapSecrets(record.outputs, record.secretOutputs),
              );
            });
            deleted.add(record);
          } catch (err) {
            failures.push(err as Error);
          }
        }),
      );
      if (failures.length > 0) break;
    }
    return { failures, survivors: records.filter((r) => !deleted.has(r)) };
  }

  private async apply<T>(operation: Operation, step: Step, work: () => Promise<T>): Promise<T> {
    const started = Date.now();
    this.options.onEvent?.({ kind: "step-start", operation, step });
    try {
      const done = await (this.clock ? this.clock.whileWaiting(work) : work());
      this.options.onEvent?.({ kind: "step-done", operation, step, durationMs: Date.now() - started });
      return done;
    } catch (err) {
      const error = stepError(step, err as Error, this.clock?.stalled);
      this.options.onEvent?.({ kind: "step-failed", operation, step, error });
      throw error;
    }
  }

  private save(state: StackState): void {
    this.state = state;
    this.store.save(state);
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

function planned(old: ResourceRecord | undefined, diff: DiffResult | undefined): Op {
  if (!old) return "create";
  if (diff!.replaces.length > 0) return "replace";
  // A resource that was made but not finished is updated even without changes, as Pulumi's step generator
  // does ("If resource was unchanged, but there were initialization errors, generate an empty update step").
  if (diff!.changes === "none" && !old.initErrors?.length) return "same";
  return "update";
}

/** What a preview tells the program of a resource: outputs it cannot know yet stay unknown. */
function previewed(
  op: Op,
  old: ResourceRecord | undefined,
  checked: Props,
  secretNames: string[],
): Resolution {
  if (op === "same") return { id: old!.id, outputs: wrapSecrets(old!.outputs, old!.secretOutputs) };
  if (op === "update")
    return { id: old!.id, outputs: wrapSecrets({ ...old!.outputs, ...checked }, secretNames) };
  return { outputs: wrapSecrets(checked, secretNames) };
}

/**
 * The URN under which the state keeps a resource of the program: each type of its qualified type (its
 * parents' and its own) as the front door maps it.
 */
function stateUrn(programUrn: string, door: FrontDoor): string {
  const parts = programUrn.split("::");
  if (parts.length < 4) return programUrn;
  parts[2] = parts[2]
    .split("$")
    .map((type) => door.stateType(type))
    .join("$");
  return parts.join("::");
}

function refOf(record: ResourceRecord): ResourceRef {
  return { urn: record.urn, type: record.type, provider: record.provider };
}

function result(
  operation: Operation,
  steps: Step[],
  outputs: Props,
  started: number,
  policyViolations: PolicyViolation[],
): OperationResult {
  return { operation, steps, outputs, policyViolations, durationMs: Date.now() - started };
}

/**
 * A type as the Pulumi CLI shows it: `pulumi-nodejs:dynamic/gpucloud:Instance` and `gpucloud:index:Instance`
 * both as `gpucloud:Instance`.
 */
export function typeName(type: string): string {
  return type.replace(/^pulumi-nodejs:dynamic\//, "").replace(/^([^:]+):index:/, "$1:");
}

/** Whether `err`, or a failure it was made of, is a provider's answer that leaves a resource's status unknown. */
function leavesStatusUnknown(err: unknown): boolean {
  for (let e = err; e instanceof Error; e = e.cause) {
    if (e instanceof ProviderCallError && e.statusUnknown) return true;
  }
  return false;
}

/** `stalled`: why the step's waits could not end, when the harness could not move the clock. */
function stepError(step: Step, cause: Error, stalled?: string): StepError {
  let message = `${step.op} of ${step.name} (${typeName(step.type)}) failed: ${cause.message}`;
  if (stalled) message = `${sentence(message)} ${sentence(stalled)}`;
  if (cause instanceof ResourceInitFailedError) {
    const reasons = cause.reasons.filter((r) => !cause.message.includes(r));
    if (reasons.length > 0) message += ` (${reasons.join("; ")})`;
    // A pending create is a record of a create whose outcome is unknown, not something the provider made.
    const what = cause.id.startsWith("pending-create:")
      ? `The provider recorded it as ${cause.id}`
      : `The provider made it (id ${cause.id}) but could not finish it`;
    message = `${sentence(message)} ${what}: it stays in the state, and the next up finishes or replaces it.`;
  }
  return new StepError(message, step, cause);
}

/** Names the resource and the call in a provider failure (the provider's message names neither). */
function failed(call: string, name: string, type: string): (err: Error) => never {
  return (err) => {
    throw new Error(`${call} of ${name} (${typeName(type)}) failed: ${err.message}`);
  };
}

function stepOf(op: Op, record: ResourceRecord): Step {
  return { op, urn: record.urn, type: record.type, name: record.name, id: record.id, changes: [] };
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** The properties whose value differs, old to new (absent and null are the same). */
function changes(olds: Props, news: Props, secrets: string[], replaces: string[]): PropertyChange[] {
  const names = [...new Set([...Object.keys(olds), ...Object.keys(news)])].sort();
  return names
    .filter((name) => !same(olds[name], news[name]))
    .map((name) => ({
      name,
      old: olds[name],
      new: news[name],
      secret: secrets.includes(name) || isSecret(olds[name]) || isSecret(news[name]),
      replaces: replaces.includes(name),
    }));
}
