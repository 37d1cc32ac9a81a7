/**
 * A miniature Pulumi engine: preview, up, refresh and destroy of one stack, with the program run under
 * Pulumi's runtime mocks and every resource handled by the real dynamic-provider server over gRPC, the
 * calls the Pulumi engine makes (check, diff, create, update, read, delete). It knows dynamic resources
 * only, which is all this package has.
 */
import * as path from "node:path";
import { Program, type Registration, type Resolution } from "./program";
import {
  assertBuilt,
  ensurePackageLink,
  isSecret,
  ProviderServer,
  secret,
  UNKNOWN,
  type DiffResult,
  type Props,
} from "./server";
import { dependencyLevels, loadState, saveState, type ResourceRecord, type StackState } from "./state";

const PROVIDER_KEY = "__provider";

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
}

export interface OperationResult {
  operation: Operation;
  steps: Step[];
  /** Stack outputs in wire form: secrets wrapped (see `isSecret`), unknowns as UNKNOWN. */
  outputs: Props;
  durationMs: number;
}

export type EngineEvent =
  | { kind: "step-start"; operation: Operation; step: Step }
  | { kind: "step-done"; operation: Operation; step: Step; durationMs: number }
  | { kind: "step-failed"; operation: Operation; step: Step; error: Error };

/** An operation failed; the state keeps whatever was done before the failure. */
export class OperationError extends Error {
  override readonly name = "OperationError";
  constructor(
    readonly operation: Operation,
    readonly failures: Error[],
    readonly steps: Step[],
  ) {
    // Resources that fail alike (every instance of a fleet) give one message each.
    super(`${operation} failed: ${[...new Set(failures.map((f) => f.message))].join("; ")}`);
  }
}

export interface StackOptions {
  /** The compiled program: a module exporting a function that returns the stack outputs. */
  program: string;
  project: string;
  stack: string;
  /** Stack config with fully qualified keys (`gpucloud:baseUrl`); wrap secrets with `secret()`. */
  config: Props;
  stateFile: string;
  /** Where the provider server resolves the shim's `require`s; default: the program's folder. */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  onEvent?: (event: EngineEvent) => void;
}

/** What one preview or up has seen and done so far. */
interface Deployment {
  operation: "preview" | "up";
  steps: Step[];
  /** URNs the program registered. */
  seen: Set<string>;
  /** The new state's records, in the order their resources finished. */
  registered: ResourceRecord[];
  /** Old records replaced by new ones, deleted at the end. */
  replaced: ResourceRecord[];
}

/** One stack: its program, its state file and one provider server for every operation. */
export class Stack {
  private constructor(
    private readonly options: StackOptions,
    private readonly program: Program,
    private readonly server: ProviderServer,
    private state: StackState,
  ) {}

  static async open(options: StackOptions): Promise<Stack> {
    assertBuilt();
    ensurePackageLink();
    const program = Program.load(options.program);
    const state = loadState(options.stateFile, options.project, options.stack);
    const server = await ProviderServer.start({
      cwd: options.cwd ?? path.dirname(options.program),
      env: options.env,
    });
    try {
      await server.configure(options.config);
    } catch (err) {
      await server.stop();
      throw err;
    }
    return new Stack({ ...options }, program, server, state);
  }

  /** Like `pulumi config set`: the next operations run the program (and configure the provider) with `config`. */
  async setConfig(config: Props): Promise<void> {
    await this.server.configure(config);
    this.options.config = config;
  }

  /** The state as it was last saved. */
  get current(): StackState {
    return this.state;
  }

  close(): Promise<void> {
    return this.server.stop();
  }

  /**
   * Runs the program with unknowns and reports what `up` would do; changes nothing. With `refresh`
   * (`pulumi preview --refresh`), the plan is made against the resources as read back from the cloud, so
   * drift shows as the changes that would repair it; the refreshed state is not saved.
   */
  async preview(options: { refresh?: boolean } = {}): Promise<OperationResult> {
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
  }

  /** Runs the program and brings the cloud and the state to it; removes what the program no longer declares. */
  up(): Promise<OperationResult> {
    return this.deploy("up");
  }

  /** Reads every resource back from the cloud and stores what it finds: drift shows as `update`, gone as `delete`. */
  async refresh(): Promise<OperationResult> {
    const started = Date.now();
    const { steps, failures, resources } = await this.readAll();
    this.save({ ...this.state, resources });
    if (failures.length > 0) throw new OperationError("refresh", failures, steps);
    return this.result("refresh", steps, this.state.outputs, started);
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

  /** Deletes every resource, dependents first; resources with no dependency between them go in parallel. */
  async destroy(): Promise<OperationResult> {
    const started = Date.now();
    const steps: Step[] = [];
    const { failures, survivors } = await this.deleteAll("destroy", this.state.resources, steps);
    this.save(
      failures.length > 0
        ? { ...this.state, resources: survivors }
        : { ...this.state, resources: [], outputs: {}, secretOutputs: [] },
    );
    if (failures.length > 0) throw new OperationError("destroy", failures, steps);
    return this.result("destroy", steps, {}, started);
  }

  private async deploy(operation: "preview" | "up"): Promise<OperationResult> {
    const started = Date.now();
    const preview = operation === "preview";
    const steps: Step[] = [];
    const deployment: Deployment = { operation, steps, seen: new Set(), registered: [], replaced: [] };
    const { registered, replaced } = deployment;
    const run = await this.program.run({
      project: this.options.project,
      stack: this.options.stack,
      preview,
      config: this.options.config,
      register: (registration) => this.register(deployment, registration),
    });
    const removed = this.state.resources.filter((r) => !deployment.seen.has(r.urn));
    if (preview) {
      for (const r of removed) steps.push(stepOf("delete", r));
      if (run.errors.length > 0) throw new OperationError(operation, run.errors, steps);
      return this.result(operation, steps, run.outputs, started);
    }
    const failed = run.errors.length > 0;
    // Replaced resources go after their replacements were made (Pulumi's create-before-delete), even when
    // another step failed.
    const replacements = await this.deleteAll(operation, replaced, steps);
    // After a failure nothing is removed: the program may not have registered everything it declares.
    const kept = new Set(registered.map((r) => r.urn));
    const untouched = this.state.resources.filter((r) => !kept.has(r.urn));
    const removals = failed
      ? { failures: [], survivors: untouched }
      : await this.deleteAll(operation, removed, steps);
    const failures = [...run.errors, ...replacements.failures, ...removals.failures];
    this.save({
      ...this.state,
      resources: [...registered, ...removals.survivors],
      outputs: failed ? this.state.outputs : plainOutputs(run.outputs),
      secretOutputs: failed
        ? this.state.secretOutputs
        : Object.keys(run.outputs).filter((k) => holdsSecret(run.outputs[k])),
    });
    if (failures.length > 0) throw new OperationError(operation, failures, steps);
    return this.result(operation, steps, run.outputs, started);
  }

  /** One resource of the program: check, diff against the state, then create, update, replace or nothing. */
  private async register(deployment: Deployment, registration: Registration): Promise<Resolution> {
    const { operation, steps, registered, replaced } = deployment;
    if (!registration.custom) return { outputs: registration.inputs };
    if (!registration.type.startsWith("pulumi-nodejs:dynamic/")) {
      throw new Error(`${registration.urn}: the engine handles dynamic resources only.`);
    }
    const { urn } = registration;
    deployment.seen.add(urn);
    const provider = registration.inputs[PROVIDER_KEY];
    if (typeof provider !== "string") throw new Error(`${urn} was registered without ${PROVIDER_KEY}.`);
    const news = withoutProvider(registration.inputs);
    const secretOutputs = [
      ...registration.additionalSecretOutputs,
      ...Object.keys(news).filter((k) => isSecret(news[k])),
    ];
    const old = this.state.resources.find((r) => r.urn === urn);
    const checked = await this.check(registration, provider, news, old);
    const diff = old
      ? await this.diff(old, provider, checked).catch(failed("diff", registration))
      : undefined;
    const op: Op = !old
      ? "create"
      : diff!.replaces.length > 0
        ? "replace"
        : diff!.changes === "none"
          ? "same"
          : "update";
    const step: Step = {
      op,
      urn,
      type: registration.type,
      name: registration.name,
      id: old?.id,
      changes: old && op !== "same" ? changes(old.inputs, checked, secretOutputs, diff!.replaces) : [],
    };
    steps.push(step);
    const record = (id: string, outputs: Props): ResourceRecord => {
      const next: ResourceRecord = {
        urn,
        type: registration.type,
        name: registration.name,
        id,
        provider,
        inputs: checked,
        outputs,
        secretOutputs,
        dependencies: registration.dependencies,
      };
      registered.push(next);
      return next;
    };
    if (operation === "preview") {
      if (op === "same") return { id: old!.id, outputs: wrapSecrets(old!.outputs, secretOutputs) };
      if (op === "update")
        return { id: old!.id, outputs: wrapSecrets({ ...old!.outputs, ...checked }, secretOutputs) };
      return { outputs: wrapSecrets(checked, secretOutputs) };
    }
    if (op === "same") {
      const kept = record(old!.id, old!.outputs);
      return { id: kept.id, outputs: wrapSecrets(kept.outputs, secretOutputs) };
    }
    const done = await this.apply(operation, step, async () => {
      if (op === "update") return { id: old!.id, outputs: await this.update(old!, provider, checked) };
      const deleteFirst = op === "replace" && diff!.deleteBeforeReplace;
      if (deleteFirst) await this.server.delete(urn, old!.id, withProvider(old!.outputs, old!.provider));
      const created = await this.server.create(urn, withProvider(checked, provider));
      // The old resource goes only once its replacement exists.
      if (op === "replace" && !deleteFirst) replaced.push(old!);
      return { id: created.id, outputs: withoutProvider(created.outputs) };
    });
    step.id = done.id;
    const saved = record(done.id, done.outputs);
    return { id: saved.id, outputs: wrapSecrets(saved.outputs, secretOutputs) };
  }

  private async check(
    registration: Registration,
    provider: string,
    news: Props,
    old: ResourceRecord | undefined,
  ): Promise<Props> {
    const olds = old ? withProvider(old.inputs, old.provider) : {};
    const result = await this.server
      .check(registration.urn, olds, withProvider(news, provider))
      .catch(failed("check", registration));
    if (result.failures.length > 0) {
      const reasons = result.failures.map((f) => `${f.property}: ${f.reason}`).join("; ");
      throw new Error(`${registration.name} (${typeName(registration.type)}) failed its check: ${reasons}`);
    }
    return withoutProvider(result.inputs);
  }

  private diff(old: ResourceRecord, provider: string, checked: Props): Promise<DiffResult> {
    return this.server.diff(
      old.urn,
      old.id,
      withProvider(old.outputs, old.provider),
      withProvider(checked, provider),
    );
  }

  private async update(old: ResourceRecord, provider: string, checked: Props): Promise<Props> {
    const outputs = await this.server.update(
      old.urn,
      old.id,
      withProvider(old.outputs, old.provider),
      withProvider(checked, provider),
    );
    return withoutProvider(outputs);
  }

  private async readBack(record: ResourceRecord, steps: Step[]): Promise<ResourceRecord | undefined> {
    const result = await this.server.read(
      record.urn,
      record.id,
      withProvider(record.outputs, record.provider),
      withProvider(record.inputs, record.provider),
    );
    if (result.id === "") {
      steps.push(stepOf("delete", record));
      return undefined;
    }
    const outputs = withoutProvider(result.outputs);
    const found = changes(record.outputs, outputs, record.secretOutputs, []);
    steps.push({ ...stepOf(found.length > 0 ? "update" : "same", record), changes: found });
    return {
      ...record,
      id: result.id,
      outputs,
      inputs: result.inputs ? withoutProvider(result.inputs) : record.inputs,
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
            await this.apply(operation, step, () =>
              this.server.delete(record.urn, record.id, withProvider(record.outputs, record.provider)),
            );
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
      const result = await work();
      this.options.onEvent?.({ kind: "step-done", operation, step, durationMs: Date.now() - started });
      return result;
    } catch (err) {
      const error = new Error(
        `${step.op} of ${step.name} (${typeName(step.type)}) failed: ${(err as Error).message}`,
      );
      this.options.onEvent?.({ kind: "step-failed", operation, step, error });
      throw error;
    }
  }

  private save(state: StackState): void {
    this.state = state;
    saveState(this.options.stateFile, state);
  }

  private result(operation: Operation, steps: Step[], outputs: Props, started: number): OperationResult {
    return { operation, steps, outputs, durationMs: Date.now() - started };
  }
}

/** `pulumi-nodejs:dynamic/gpucloud:Instance` -> `gpucloud:Instance`, as the Pulumi CLI shows dynamic types. */
export function typeName(type: string): string {
  return type.replace(/^pulumi-nodejs:dynamic\//, "");
}

/** Names the resource and the call in a provider failure (the server's message names neither). */
function failed(call: string, resource: { name: string; type: string }): (err: Error) => never {
  return (err) => {
    throw new Error(`${call} of ${resource.name} (${typeName(resource.type)}) failed: ${err.message}`);
  };
}

function stepOf(op: Op, record: ResourceRecord): Step {
  return { op, urn: record.urn, type: record.type, name: record.name, id: record.id, changes: [] };
}

function withProvider(props: Props, provider: string): Props {
  return { ...props, [PROVIDER_KEY]: provider };
}

function withoutProvider(props: Props): Props {
  const { [PROVIDER_KEY]: _provider, ...rest } = props;
  return rest;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** The properties whose value differs, old to new (absent and null are the same). */
function changes(olds: Props, news: Props, secrets: string[], replaces: string[]): PropertyChange[] {
  const names = [...new Set([...Object.keys(olds), ...Object.keys(news)])].sort();
  return names
    .filter((name) => !same(plain(olds[name]), plain(news[name])))
    .map((name) => ({
      name,
      old: plain(olds[name]),
      new: plain(news[name]),
      secret: secrets.includes(name) || isSecret(olds[name]) || isSecret(news[name]),
      replaces: replaces.includes(name),
    }));
}

function plain(value: unknown): unknown {
  return isSecret(value) ? plain(value.value) : value;
}

function wrapSecrets(outputs: Props, names: string[]): Props {
  const out: Props = { ...outputs };
  for (const name of names) if (name in out && !isSecret(out[name])) out[name] = secret(out[name]);
  return out;
}

/** True when the wire value is a secret or holds one anywhere inside. */
export function holdsSecret(value: unknown): boolean {
  if (isSecret(value)) return true;
  if (Array.isArray(value)) return value.some(holdsSecret);
  if (typeof value === "object" && value !== null) return Object.values(value).some(holdsSecret);
  return false;
}

function plainOutputs(outputs: Props): Props {
  const strip = (value: unknown): unknown => {
    if (isSecret(value)) return strip(value.value);
    if (Array.isArray(value)) return value.map(strip);
    if (typeof value === "object" && value !== null)
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, strip(v)]));
    return value;
  };
  return strip(outputs) as Props;
}

/** A wire value for people: secrets as `[secret]`, preview unknowns as `[unknown]`. */
export function displayValue(value: unknown): unknown {
  if (isSecret(value)) return "[secret]";
  if (value === UNKNOWN) return "[unknown]";
  if (Array.isArray(value)) return value.map(displayValue);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, displayValue(v)]));
  return value;
}
