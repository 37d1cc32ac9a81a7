/**
 * The engine of one stack: what the Pulumi engine does for preview, up, refresh and destroy, over the
 * stack's program, state and provider. The program runs under Pulumi's runtime mocks; each resource it
 * registers is planned and applied by a Deployment (deployment.ts); reads and deletes have rooms of their
 * own. It follows the engine's rules where this package depends on them: create-before-delete replacement,
 * dependents deleted first, and resources the provider made but could not finish (ErrorResourceInitFailed)
 * kept in the state and finished by the next `up`.
 */
import type { SteppedClock } from "../clock";
import type { FrontDoor } from "../front-door";
import { PolicyRun, type PolicyPackOptions } from "../policy-pack";
import type { Program } from "../program";
import { enterProgramEnvironment } from "../../provider/program-environment";
import { ResourceMonitor } from "../resource-monitor";
import type { StackState, StateStore } from "../state";
import { holdsSecret, reveal, wrapSecrets, type Props } from "../wire";
import { deleteAll } from "./deletion";
import { Deployment } from "./deployment";
import { OperationError } from "./errors";
import { readAll } from "./refresh";
import { StepRunner, type EngineEvent } from "./step-runner";
import { result, stepOf, type OperationResult, type Step } from "./steps";

/** The stack's settings the engine runs with. */
export interface EngineSettings {
  project: string;
  stack: string;
  config: Props;
  env: NodeJS.ProcessEnv;
  policyPacks?: PolicyPackOptions[];
  clock?: SteppedClock;
  onEvent?: (event: EngineEvent) => void;
}

export class Engine {
  /** The engine's resource monitor a provider's Construct registers with, started at the first component. */
  private monitor?: Promise<ResourceMonitor>;
  /** The program environments of this engine's runs that have not settled yet (see deployWith). */
  private readonly environments = new Set<() => void>();
  private readonly runner: StepRunner;

  constructor(
    private readonly settings: EngineSettings,
    private readonly program: Program,
    private readonly store: StateStore,
    private provider: FrontDoor,
    private savedState: StackState,
  ) {
    this.runner = new StepRunner(settings.clock, settings.onEvent);
  }

  /** The state as it was last saved. */
  get state(): StackState {
    return this.savedState;
  }

  get door(): FrontDoor {
    return this.provider;
  }

  /** Closes the provider and takes `door`, configured with `config`, in its place. */
  async replaceDoor(door: FrontDoor, config: Props): Promise<void> {
    await this.provider.close();
    this.provider = door;
    this.settings.config = config;
  }

  async preview(options: { refresh?: boolean }): Promise<OperationResult> {
    if (!options.refresh) return this.deploy("preview");
    const before = this.savedState;
    const read = await readAll(this.provider, before.resources);
    if (read.failures.length > 0) throw new OperationError("preview", read.failures, read.steps);
    // The plan is made against the refreshed resources; the refreshed state is not saved.
    this.savedState = { ...before, resources: read.resources };
    try {
      return await this.deploy("preview");
    } finally {
      this.savedState = before;
    }
  }

  async up(options: { refresh?: boolean; skipPreview?: boolean }): Promise<OperationResult> {
    if (options.refresh) {
      const read = await readAll(this.provider, this.savedState.resources);
      this.save({ ...this.savedState, resources: read.resources });
      if (read.failures.length > 0) throw new OperationError("up", read.failures, read.steps);
    }
    if (this.settings.policyPacks?.length && !options.skipPreview) await this.previewBeforeUp();
    return this.deploy("up");
  }

  async refresh(): Promise<OperationResult> {
    const started = Date.now();
    const { steps, failures, resources } = await readAll(this.provider, this.savedState.resources);
    this.save({ ...this.savedState, resources });
    if (failures.length > 0) throw new OperationError("refresh", failures, steps);
    return result(
      "refresh",
      steps,
      wrapSecrets(this.savedState.outputs, this.savedState.secretOutputs),
      started,
      [],
    );
  }

  async destroy(): Promise<OperationResult> {
    const started = Date.now();
    const steps: Step[] = [];
    const { failures, survivors } = await deleteAll(
      this.provider,
      this.runner,
      "destroy",
      this.savedState.resources,
      steps,
    );
    this.save(
      failures.length > 0
        ? { ...this.savedState, resources: survivors }
        : { ...this.savedState, resources: [], outputs: {}, secretOutputs: [] },
    );
    if (failures.length > 0) throw new OperationError("destroy", failures, steps);
    return result("destroy", steps, {}, started, []);
  }

  /** Stops the program, the provider and the resource monitor; the state stays where it is. */
  async close(): Promise<void> {
    this.program.dispose();
    // A run whose program never settles (outputs waiting on a failed resource) gives its environment back here.
    for (const leave of this.environments) leave();
    this.environments.clear();
    await this.provider.close();
    await (await this.monitor?.catch(() => undefined))?.close();
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

  private async deploy(operation: "preview" | "up"): Promise<OperationResult> {
    const packs = this.settings.policyPacks ?? [];
    if (packs.length === 0) return this.deployWith(operation, undefined);
    const { project, stack, config, env } = this.settings;
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

  /** Runs the program, its registrations planned (and in an up applied) by a Deployment, then ends the operation. */
  private async deployWith(
    operation: "preview" | "up",
    policies: PolicyRun | undefined,
  ): Promise<OperationResult> {
    const started = Date.now();
    const { project, stack, config, env } = this.settings;
    const deployment = new Deployment(operation, policies, {
      door: this.provider,
      project,
      stack,
      config,
      resources: this.savedState.resources,
      runner: this.runner,
      resourceMonitor: () => this.resourceMonitor(),
    });
    // The program's data sources see `env`, as the provider process does (under the CLI both share one),
    // until the program has settled: a run that stopped early may still call them.
    const entered = enterProgramEnvironment(env, {
      componentsByPlugin: this.provider.construct !== undefined,
    });
    const leave = () => {
      entered.leave();
      this.environments.delete(leave);
    };
    this.environments.add(leave);
    const run = await this.program
      .run({
        project,
        stack,
        preview: operation === "preview",
        config,
        register: (registration) => deployment.register(registration),
        registerOutputs: (urn, outputs) => deployment.registerOutputs(urn, outputs),
        onLateFailure: (error) => this.runner.lateFailure(operation, error),
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
    const { steps } = deployment;
    const removed = this.savedState.resources.filter((r) => !deployment.seen.has(r.urn));
    if (operation === "preview") {
      for (const r of removed) steps.push(stepOf("delete", r));
      if (run.errors.length > 0)
        throw new OperationError(operation, run.errors, steps, deployment.violations);
      await deployment.analyzeStack();
      return result(operation, steps, run.outputs, started, deployment.violations);
    }
    const failed = run.errors.length > 0;
    // Replaced resources go after their replacements were made (Pulumi's create-before-delete), even when
    // another step failed.
    const replacements = await deleteAll(this.provider, this.runner, operation, deployment.replaced, steps);
    // After a failure nothing is removed: the program may not have registered everything it declares.
    const kept = new Set(deployment.registered.map((r) => r.urn));
    const untouched = this.savedState.resources.filter(
      (r) => !kept.has(r.urn) && !deployment.deletedFirst.has(r),
    );
    const removals = failed
      ? { failures: [], survivors: untouched }
      : await deleteAll(this.provider, this.runner, operation, removed, steps);
    const failures = [...run.errors, ...replacements.failures, ...removals.failures];
    this.save({
      ...this.savedState,
      resources: [...deployment.registered, ...removals.survivors],
      outputs: failed ? this.savedState.outputs : (reveal(run.outputs) as Props),
      secretOutputs: failed
        ? this.savedState.secretOutputs
        : Object.keys(run.outputs).filter((k) => holdsSecret(run.outputs[k])),
    });
    if (failures.length > 0) throw new OperationError(operation, failures, steps, deployment.violations);
    await deployment.analyzeStack();
    return result(operation, steps, run.outputs, started, deployment.violations);
  }

  private resourceMonitor(): Promise<ResourceMonitor> {
    this.monitor ??= ResourceMonitor.start();
    return this.monitor;
  }

  private save(state: StackState): void {
    this.savedState = state;
    this.store.save(state);
  }
}
