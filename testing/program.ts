/**
 * Runs a real Pulumi program under `pulumi.runtime.setMocks`, handing every resource registration to the
 * engine (which forwards it to the dynamic-provider server) and returning the program's stack outputs.
 *
 * The program is a module exporting a function (`export = async () => ({ ...outputs })`), the form the
 * Pulumi CLI runs too (cmd/run calls an exported function and uses its result as the stack outputs);
 * a function can run once per operation in one process, where module-level code would run only once.
 * The program and the engine must share one `@pulumi/pulumi`, so it is resolved from the program's folder.
 */
import { createRequire } from "node:module";
import type * as PulumiModule from "@pulumi/pulumi";
import type * as ResourceProto from "@pulumi/pulumi/proto/resource_pb";
import { messageOf } from "../provider/framework/errors";
import { enterProgramEnvironment } from "../provider/program-environment";
import { isSecret, UNKNOWN, type Props, type WrappedSecret } from "./wire";

type Pulumi = typeof PulumiModule;
export type ProgramFunction = () => unknown;

/** One resource as the program registered it. */
export interface Registration {
  /** The URN the engine gives it: its type prefixed by its parent's qualified type. */
  urn: string;
  type: string;
  name: string;
  /** The URN of its parent; absent for a resource at the top of the stack. */
  parent?: string;
  /** False for component resources, which have no provider. */
  custom: boolean;
  /** A component whose children the engine has its provider's Construct make (a multi-language component). */
  remote: boolean;
  /** Inputs in wire form: secrets wrapped, preview unknowns as the UNKNOWN sentinel, `__provider` included. */
  inputs: Props;
  /** URNs of the resources whose outputs (or `dependsOn`) this one waits on. */
  dependencies: string[];
  /** For each input, the URNs of the resources its value came from. */
  propertyDependencies: Record<string, string[]>;
  additionalSecretOutputs: string[];
}

/** What the request of a registration tells beyond the type, name and inputs setMocks hands over. */
type RegistrationDetails = Pick<
  Registration,
  "urn" | "parent" | "remote" | "dependencies" | "propertyDependencies" | "additionalSecretOutputs"
>;

/** The engine's answer to a registration: outputs in wire form (secrets wrapped, UNKNOWN for unknowns). */
export interface Resolution {
  /** Absent while a preview cannot know it yet. */
  id?: string;
  outputs: Props;
}

export interface ProgramRunOptions {
  project: string;
  stack: string;
  preview: boolean;
  /** Stack config, fully qualified keys; secrets wrapped with `secret()`. */
  config: Props;
  register(registration: Registration): Promise<Resolution>;
  /** A component's outputs, in wire form, as it registers them once its children are declared. */
  registerOutputs(urn: string, outputs: Props): void;
  /** A failure of a run that had already stopped (after another failure) and so was already reported. */
  onLateFailure?(error: Error): void;
}

export interface ProgramLoadOptions {
  project: string;
  stack: string;
  /** Stack config, fully qualified keys; secrets wrapped with `secret()`. */
  config: Props;
  /** The environment the program's data sources read (as in its runs). */
  env: NodeJS.ProcessEnv;
}

export interface ProgramRun {
  /** Stack outputs in wire form. */
  outputs: Props;
  /** Settles when the program's function has (a run that stopped early returns before). Never rejects. */
  settled: Promise<void>;
  /** Every failure: of a registration, or of the program itself. */
  errors: Error[];
}

interface MonitorHooks {
  registerResource(
    req: ResourceProto.RegisterResourceRequest,
    callback: (err: unknown, res?: ResourceProto.RegisterResourceResponse) => void,
  ): void;
  registerResourceOutputs(
    req: ResourceProto.RegisterResourceOutputsRequest,
    callback: (err: unknown, res?: unknown) => void,
  ): void;
}

/** Hands a registration's details from the monitor's registerResource to the newResource it calls. */
interface Handoff {
  details?: RegistrationDetails;
}

interface RuntimeInternals {
  /** Settles once every resource registration and output the program started has finished. */
  waitForRPCs(): Promise<void>;
}

export class Program {
  /** Stops each run's watch for stray rejections; a run that stopped early keeps its watch until disposal. */
  private readonly unwatchers = new Set<() => void>();

  private constructor(
    private readonly main: ProgramFunction,
    private readonly pulumi: Pulumi,
    /** Node's require from the program's folder: the program's own copy of @pulumi/pulumi. */
    private readonly load: NodeJS.Require,
  ) {}

  /**
   * Loads the program module. Its top-level code runs as in a run: with the stack's config and
   * environment, under a monitor that takes no registration (a program whose work is all top-level code
   * is refused below, as the harness cannot run it again). What that code starts (data sources) is waited
   * for, and its failures are the load's: never this process's unhandled rejections.
   */
  static async load(file: string, stack: ProgramLoadOptions): Promise<Program> {
    const load = createRequire(file);
    const stray: Error[] = [];
    let exported: unknown;
    let pulumi: Pulumi;
    const entered = enterProgramEnvironment(stack.env);
    const unwatch = strayRejections.watch((error) => stray.push(error));
    try {
      pulumi = load("@pulumi/pulumi") as Pulumi;
      pulumi.runtime.setAllConfig(stringConfig(stack.config), secretKeys(stack.config));
      await pulumi.runtime.setMocks(REFUSING_MONITOR, stack.project, stack.stack, false);
      exported = load(file);
      await entered.work();
      await rejectionsReported();
    } catch (err) {
      throw loadFailure(file, err);
    } finally {
      unwatch();
      entered.leave();
    }
    const main =
      typeof exported === "function"
        ? exported
        : typeof (exported as { default?: unknown })?.default === "function"
          ? (exported as { default: ProgramFunction }).default
          : undefined;
    // Top-level resources that waited on a failed value, or that a program refused here declared, stay waiting.
    if (!main || stray.length > 0) markStopped(load);
    if (!main) {
      throw new Error(
        `The program ${file} exports no function. Write it as \`export = async () => { ...; return outputs; }\` ` +
          "so that each operation can run it again.",
      );
    }
    if (stray.length > 0) throw loadFailure(file, stray[0]);
    return new Program(main as ProgramFunction, pulumi, load);
  }

  async run(options: ProgramRunOptions): Promise<ProgramRun> {
    const { pulumi } = this;
    const errors: Error[] = [];
    const inFlight = new Set<Promise<Resolution>>();
    let stop: () => void = () => undefined;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    pulumi.runtime.setAllConfig(stringConfig(options.config), secretKeys(options.config));
    const handoff: Handoff = {};
    await pulumi.runtime.setMocks(
      {
        newResource: async (args) => {
          const details = handoff.details ?? {
            // A read (`Resource.get`) is no registration: it comes without them.
            urn: urnOf(options, args.type, args.name),
            remote: false,
            dependencies: [],
            propertyDependencies: {},
            additionalSecretOutputs: [],
          };
          handoff.details = undefined;
          // After a failure nothing new starts, as the Pulumi engine stops issuing steps.
          if (errors.length > 0) throw monitorTerminating();
          const work = options.register({
            type: args.type,
            name: args.name,
            custom: args.custom ?? true,
            inputs: this.toWire(args.inputs) as Props,
            ...details,
          });
          inFlight.add(work);
          try {
            const resolution = await work;
            return { id: resolution.id, state: resolution.outputs };
          } catch (err) {
            errors.push(asError(err));
            stop();
            throw monitorTerminating();
          } finally {
            inFlight.delete(work);
          }
        },
        call: (args) => {
          throw new Error(`The engine runs no provider functions: ${args.token} was invoked.`);
        },
      },
      options.project,
      options.stack,
      options.preview,
    );
    this.hookMonitor(handoff, options);
    // An error thrown inside an apply that nothing awaits surfaces only as an unhandled rejection; the
    // Pulumi CLI's language host fails the deployment on those too (cmd/run/run.js).
    const stray: Error[] = [];
    let late = false;
    // It stops the deployment as a failed registration does: what waits on the failed value (a resource
    // fed by a failed data source, the stack outputs) would never settle.
    const unwatch = strayRejections.watch((error) => {
      if (late) return options.onLateFailure?.(error);
      stray.push(error);
      stop();
    });
    this.unwatchers.add(unwatch);
    const done = () => {
      unwatch();
      this.unwatchers.delete(unwatch);
    };
    let outputs: Props = {};
    const completed = (async () => {
      const result = (await this.main()) ?? {};
      outputs = (await pulumi.runtime.serializeProperties("outputs", result as Props)) as Props;
      await (pulumi.runtime as unknown as RuntimeInternals).waitForRPCs();
    })().catch((err: unknown) => {
      if (late) options.onLateFailure?.(asError(err));
      else stray.push(asError(err));
    });
    // After a failed registration the outputs that depend on it never settle: stop waiting for them.
    const finished = await Promise.race([completed.then(() => true), stopped.then(() => false)]);
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    await rejectionsReported();
    // A run that stopped early may still fail (a data source still under way): those failures stay its own,
    // not the host process's, until its work settles or the program is disposed of.
    late = true;
    if (finished) done();
    else {
      markStopped(this.load);
      // Node reports the rejections of a turn once its microtasks are drained: keep watching until then.
      void completed.then(() => setImmediate(done));
    }
    return { outputs, errors: [...errors, ...stray], settled: completed };
  }

  /** Ends the watch of runs that stopped early and still have work pending. */
  dispose(): void {
    for (const unwatch of this.unwatchers) unwatch();
    this.unwatchers.clear();
  }

  /**
   * setMocks hands newResource only type, name and inputs; the parent, the dependencies (of the resource
   * and of each input), whether it is remote and additionalSecretOutputs are on the request, so the mock
   * monitor's registerResource is wrapped to read them first: the mock calls newResource synchronously
   * from there (@pulumi/pulumi runtime/mocks.js), which takes them from `handoff`. The program is answered
   * with the engine's URN (the mock's own keeps only the parent's last type), and the outputs a component
   * registers go to `registerOutputs`.
   */
  private hookMonitor(handoff: Handoff, options: ProgramRunOptions): void {
    const monitor = this.pulumi.runtime.getMonitor() as unknown as MonitorHooks;
    const original = monitor.registerResource.bind(monitor);
    monitor.registerResource = (req, callback) => {
      const propertyDependencies: Record<string, string[]> = {};
      req.getPropertydependenciesMap().forEach((deps, property) => {
        propertyDependencies[property] = deps.getUrnsList();
      });
      const urn = urnOf(options, req.getType(), req.getName(), req.getParent());
      handoff.details = {
        urn,
        ...(req.getParent() ? { parent: req.getParent() } : {}),
        remote: req.getRemote(),
        dependencies: req.getDependenciesList(),
        propertyDependencies,
        additionalSecretOutputs: req.getAdditionalsecretoutputsList(),
      };
      original(req, (err, res) => {
        res?.setUrn(urn);
        callback(err, res);
      });
    };
    monitor.registerResourceOutputs = (req, callback) => {
      options.registerOutputs(req.getUrn(), (req.getOutputs()?.toJavaScript() ?? {}) as Props);
      callback(null, {});
    };
  }

  /** Inputs as the mock deserialized them, back to wire form: unknowns become the engine's sentinel. */
  private toWire(value: unknown): unknown {
    if (this.pulumi.isUnknown(value)) return UNKNOWN;
    if (isSecret(value)) return { ...value, value: this.toWire(value.value) } as WrappedSecret;
    if (Array.isArray(value)) return value.map((v) => this.toWire(v));
    if (typeof value === "object" && value !== null) {
      const out: Props = {};
      for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = this.toWire(v);
      return out;
    }
    return value;
  }
}

/** Settles once Node has reported the rejections of this turn (it does so when its microtasks drain). */
function rejectionsReported(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** `text` ending with a full stop (or the mark it already ends with), for a sentence to follow. */
export function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** A failure of loading the program, with Node's first line (its require stack names this package's files). */
function loadFailure(file: string, err: unknown): Error {
  const reason = messageOf(err).split("\n")[0];
  // Node runs JavaScript only: TypeScript fails on its first type annotation or `export =`.
  const compileFirst = /\.[cm]?tsx?$/.test(file)
    ? " Node.js runs JavaScript only: compile the program first (npx tsc) and pass the compiled .js file."
    : "";
  return new Error(
    `Could not load the program ${file}: ${compileFirst ? sentence(reason) : reason}${compileFirst}`,
  );
}

/**
 * Tells the SDK the deployment stopped, as it learns when the engine's monitor goes away (runtime/
 * settings.js terminateRpcs sets this flag): what a stopped program leaves waiting is then not reported
 * as leaked promises at exit, a report that also sets the host process's exit code to 1.
 */
function markStopped(load: NodeJS.Require): void {
  try {
    const state = load("@pulumi/pulumi/runtime/state") as { getStore(): { terminated: boolean } };
    state.getStore().terminated = true;
  } catch {
    // Another layout of the SDK: the leak report may show at exit, nothing else changes.
  }
}

/** The monitor a program's top-level code meets while it loads: it declares nothing there. */
const REFUSING_MONITOR: PulumiModule.runtime.Mocks = {
  newResource: () => {
    throw monitorTerminating();
  },
  call: () => {
    throw monitorTerminating();
  },
};

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}

/**
 * Unhandled rejections of this process while a program runs (or while a run that stopped early still has
 * work pending) are that program's: the latest watcher gets them. With no watcher, none is listened for,
 * so the host process keeps its own policy.
 */
class StrayRejections {
  private readonly watchers: ((error: Error) => void)[] = [];
  private readonly onRejection = (reason: unknown) => this.watchers.at(-1)?.(asError(reason));

  watch(watcher: (error: Error) => void): () => void {
    this.watchers.push(watcher);
    if (this.watchers.length === 1) process.on("unhandledRejection", this.onRejection);
    return () => {
      const index = this.watchers.indexOf(watcher);
      if (index < 0) return;
      this.watchers.splice(index, 1);
      if (this.watchers.length === 0) process.off("unhandledRejection", this.onRejection);
    };
  }
}

const strayRejections = new StrayRejections();

/**
 * What a registration answers after a failure: the engine reports the failure itself, and the program is
 * told what the Pulumi CLI's engine tells it when it stops a deployment, that the monitor is going away
 * (gRPC UNAVAILABLE). The SDK then stops registering and raises no unhandled rejections for it
 * (runtime/resource.js, errors.js isGrpcError).
 */
function monitorTerminating(): Error {
  return Object.assign(new Error("the deployment stopped"), { code: 14 });
}

/** The stack's root resource: the engine leaves its type out of its children's URNs. */
const ROOT_STACK_TYPE = "pulumi:pulumi:Stack";

/**
 * The URN the engine gives a resource: its type prefixed by its parent's qualified type (which holds the
 * parent's own parents), as @pulumi/pulumi's createUrn computes it too.
 */
export function urnOf(
  options: { project: string; stack: string },
  type: string,
  name: string,
  parent = "",
): string {
  const parentType = parent.split("::")[2] ?? "";
  const qualified = parentType === "" || parentType === ROOT_STACK_TYPE ? type : `${parentType}$${type}`;
  return `urn:pulumi:${options.stack}::${options.project}::${qualified}::${name}`;
}

/** Stack config as text, as the engine hands it to programs and policy packs: secrets decrypted. */
export function stringConfig(config: Props): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, raw] of Object.entries(config)) {
    const value = isSecret(raw) ? raw.value : raw;
    out[key] = typeof value === "string" ? value : JSON.stringify(value);
  }
  return out;
}

/** The keys of the stack config's secret values. */
export function secretKeys(config: Props): string[] {
  return Object.keys(config).filter((k) => isSecret(config[k]));
}
