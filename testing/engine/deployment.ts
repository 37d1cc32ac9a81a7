/**
 * One preview or up, resource by resource as the program (or a provider's Construct) registers them: the
 * provider's check, the policy packs' look, the diff against the state, the plan and, in an up, the change.
 * What it saw and did is kept for the operation's end (engine.ts), which deletes what was replaced or is
 * no longer declared and saves the state.
 */
import type { FrontDoor, ResourceRef } from "../front-door";
import {
  PolicyViolationError,
  type AnalyzedResource,
  type PolicyRun,
  type PolicyViolation,
} from "../policy-pack";
import type { Registration, Resolution } from "../program";
import { ResourceInitFailedError, type DiffResult } from "../provider-process";
import type { ResourceMonitor } from "../resource-monitor";
import type { ResourceRecord } from "../state";
import { holdsSecret, reveal, wrapSecrets, type Props } from "../wire";
import { CheckFailedError, failed, OperationError, StepError } from "./errors";
import { planned, previewed } from "./plan";
import { construct, type ConstructScope } from "./remote-component";
import { parentOf, refOf, stateUrn } from "./state-urns";
import type { StepRunner } from "./step-runner";
import { changes, type Op, type Step } from "./steps";

/** What a deployment works with: the stack's provider, settings and state, and the engine's parts. */
export interface DeploymentContext {
  readonly door: FrontDoor;
  readonly project: string;
  readonly stack: string;
  readonly config: Props;
  /** The state's resources the plan is made against. */
  readonly resources: ResourceRecord[];
  readonly runner: StepRunner;
  /** The engine's resource monitor, started at the first remote component. */
  resourceMonitor(): Promise<ResourceMonitor>;
}

export class Deployment {
  /** Every resource the program registered, as the policy packs see the stack at the end. */
  private readonly news: AnalyzedResource[] = [];
  readonly steps: Step[] = [];
  /** State URNs the program registered. */
  readonly seen = new Set<string>();
  /** The new state's records, in the order their resources finished. */
  readonly registered: ResourceRecord[] = [];
  /** Old records replaced by new ones, deleted at the end. */
  readonly replaced: ResourceRecord[] = [];
  /** Old records deleted before their replacement was made (deleteBeforeReplace). */
  readonly deletedFirst = new Set<ResourceRecord>();
  /** Failures of what a provider's Construct registered: the first is why its component failed. */
  private readonly constructFailures: Error[] = [];

  constructor(
    readonly operation: "preview" | "up",
    /** The operation's policy packs, when the stack has any. */
    private readonly policies: PolicyRun | undefined,
    private readonly context: DeploymentContext,
  ) {}

  get violations(): PolicyViolation[] {
    return this.policies?.violations ?? [];
  }

  /**
   * Registers one resource and shows it to the policy packs' look at the whole stack. A remote component
   * is shown as its Construct registered it, not a second time as the program asked for it. The engine
   * shows a component with the outputs it registers (none until it does), not its inputs.
   */
  async register(registration: Registration): Promise<Resolution> {
    const resolution = await this.registerOne(registration);
    if (registration.remote) return resolution;
    const provider = registration.custom ? this.context.door.admit(registration).provider : undefined;
    const outputs = registration.custom ? resolution.outputs : {};
    this.news.push(this.analyzed(registration, outputs, provider));
    return resolution;
  }

  /** The outputs a component registered: its record keeps them (secrets by name, as a resource's), the policy packs see them. */
  registerOutputs(programUrn: string, outputs: Props): void {
    const urn = stateUrn(programUrn, this.context.door);
    const shown = this.news.find((r) => r.urn === urn);
    if (shown) shown.properties = outputs;
    const record = this.registered.find((r) => r.urn === urn);
    if (!record) return;
    record.outputs = reveal(outputs) as Props;
    record.secretOutputs = [
      ...new Set([...record.secretOutputs, ...Object.keys(outputs).filter((k) => holdsSecret(outputs[k]))]),
    ];
  }

  /**
   * The policy packs' look at the whole stack, once every step is done; their mandatory violations, of
   * this look or of single resources in a preview, fail the operation.
   */
  async analyzeStack(): Promise<void> {
    const { policies } = this;
    if (!policies) return;
    await policies.analyzeStack(this.news);
    const mandatory = policies.mandatory;
    if (mandatory.length === 0) return;
    throw new OperationError(
      this.operation,
      [new PolicyViolationError(mandatory)],
      this.steps,
      policies.violations,
    );
  }

  private registerOne(registration: Registration): Promise<Resolution> {
    if (registration.remote) return construct(this.constructScope(), registration);
    if (!registration.custom) return this.registerComponent(registration);
    return this.registerResource(registration);
  }

  /** One resource of the program: check, diff against the state, then create, update, replace or nothing. */
  private async registerResource(registration: Registration): Promise<Resolution> {
    const { door } = this.context;
    const admitted = door.admit(registration);
    const ref: ResourceRef = {
      urn: stateUrn(registration.urn, door),
      type: admitted.type,
      provider: admitted.provider,
    };
    this.seen.add(ref.urn);
    const news = admitted.inputs;
    const secretNames = [
      ...new Set([
        ...registration.additionalSecretOutputs,
        ...Object.keys(news).filter((k) => holdsSecret(news[k])),
      ]),
    ];
    const old = this.context.resources.find((r) => r.urn === ref.urn);
    const checked = await this.check(ref, registration.name, news, old);
    await this.analyze(registration, wrapSecrets(checked, secretNames), ref.provider);
    const diff = old
      ? await door
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
    this.steps.push(step);
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
        dependencies: registration.dependencies.map((u) => stateUrn(u, door)),
        ...parentOf(registration, door),
        ...(initErrors ? { initErrors } : {}),
      };
      this.registered.push(next);
      return { id, outputs: wrapSecrets(next.outputs, names) };
    };
    if (this.operation === "preview") return previewed(op, old, checked, secretNames);
    if (op === "same") return record(old!.id, wrapSecrets(old!.outputs, old!.secretOutputs));
    try {
      const done = await this.context.runner.apply(this.operation, step, () =>
        this.change(op, ref, old, wrapSecrets(checked, secretNames), diff),
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

  /**
   * A component resource made in the program: the engine calls no provider for it, shows the policy packs
   * its inputs as it does a resource's, before its step (its children wait for that step), and keeps its
   * inputs and the outputs it registers once its children are declared (registerOutputs).
   */
  private async registerComponent(registration: Registration): Promise<Resolution> {
    const { door } = this.context;
    const urn = stateUrn(registration.urn, door);
    this.seen.add(urn);
    await this.analyze(registration, registration.inputs, undefined);
    const inputs = reveal(registration.inputs) as Props;
    const secretNames = Object.keys(registration.inputs).filter((k) => holdsSecret(registration.inputs[k]));
    const old = this.context.resources.find((r) => r.urn === urn);
    const found = old ? changes(old.inputs, inputs, secretNames, []) : [];
    const op: Op = !old ? "create" : found.length > 0 ? "update" : "same";
    this.steps.push({ op, urn, type: registration.type, name: registration.name, changes: found });
    if (this.operation === "up") {
      this.registered.push({
        urn,
        type: registration.type,
        name: registration.name,
        id: "",
        component: true,
        inputs,
        outputs: old?.outputs ?? {},
        secretOutputs: [...new Set([...secretNames, ...(old?.secretOutputs ?? [])])],
        dependencies: registration.dependencies.map((u) => stateUrn(u, door)),
        ...parentOf(registration, door),
      });
    }
    return { outputs: registration.inputs };
  }

  private constructScope(): ConstructScope {
    const { door, project, stack, config } = this.context;
    return {
      door,
      project,
      stack,
      config,
      dryRun: this.operation === "preview",
      monitor: () => this.context.resourceMonitor(),
      register: (child) => this.register(child),
      registerOutputs: (urn, outputs) => this.registerOutputs(urn, outputs),
      failures: this.constructFailures,
    };
  }

  /** Create, update or replace one resource; a replacement's old resource is deleted at the end of the operation. */
  private async change(
    op: Op,
    ref: ResourceRef,
    old: ResourceRecord | undefined,
    inputs: Props,
    diff: DiffResult | undefined,
  ): Promise<{ id: string; outputs: Props }> {
    const { door } = this.context;
    if (op === "update") {
      const olds = wrapSecrets(old!.outputs, old!.secretOutputs);
      return { id: old!.id, outputs: await door.update(ref, old!.id, olds, inputs) };
    }
    const deleteFirst = op === "replace" && diff!.deleteBeforeReplace;
    if (deleteFirst) {
      await door.delete(refOf(old!), old!.id, wrapSecrets(old!.outputs, old!.secretOutputs));
      this.deletedFirst.add(old!);
    }
    // The old resource goes once its replacement exists, even one the provider could not finish.
    const superseded = () => op === "replace" && !deleteFirst && this.replaced.push(old!);
    try {
      const created = await door.create(ref, inputs);
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
    registration: Registration,
    inputs: Props,
    provider: string | undefined,
  ): Promise<void> {
    const blocking = await this.policies?.analyze(this.analyzed(registration, inputs, provider));
    if (blocking?.length && this.operation === "up") throw new PolicyViolationError(blocking);
  }

  private async check(
    ref: ResourceRef,
    name: string,
    news: Props,
    old: ResourceRecord | undefined,
  ): Promise<Props> {
    const olds = old ? wrapSecrets(old.inputs, old.secretOutputs) : {};
    const checked = await this.context.door.check(ref, olds, news).catch(failed("check", name, ref.type));
    if (checked.failures.length > 0) throw new CheckFailedError(name, ref.type, checked.failures);
    return reveal(checked.inputs) as Props;
  }

  /** A resource as the policy packs see it: under its state URN and type, with `properties` as given. */
  private analyzed(registration: Registration, properties: Props, provider?: string): AnalyzedResource {
    const { door } = this.context;
    const stateUrns = (urns: string[]) => urns.map((u) => stateUrn(u, door));
    return {
      urn: stateUrn(registration.urn, door),
      type: registration.custom ? door.stateType(registration.type) : registration.type,
      name: registration.name,
      // The engine shows a dynamic resource with its serialized provider.
      properties: provider === undefined ? properties : { ...properties, __provider: provider },
      additionalSecretOutputs: registration.additionalSecretOutputs,
      dependencies: stateUrns(registration.dependencies),
      propertyDependencies: Object.fromEntries(
        Object.entries(registration.propertyDependencies).map(([name, urns]) => [name, stateUrns(urns)]),
      ),
      ...parentOf(registration, door),
    };
  }
}
