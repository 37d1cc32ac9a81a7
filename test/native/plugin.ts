/**
 * The native plugin as the Pulumi engine meets it: a process started with the engine's address that
 * prints its port, and a gRPC client speaking the ResourceProvider protocol the way the engine does
 * (secrets wrapped, URNs and types on every resource call). Every answer and every failure the client
 * receives is kept, so a test can scan all of it (and the process's stdout and stderr) for the API key.
 */
import { ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import * as readline from "node:readline";
import * as grpc from "@grpc/grpc-js";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { PluginAttach, type PluginInfo } from "@pulumi/pulumi/proto/plugin_pb";
import * as provrpc from "@pulumi/pulumi/proto/provider_grpc_pb";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import { REPO_ROOT } from "../harness";
import { resourceInitFailed } from "../support/init-failure";

export type Props = Record<string, unknown>;

export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";
const SECRET_SIG_VALUE = "1b47061264138c4ac30d75fd1eb44270";

export const BIN = path.join(REPO_ROOT, "dist", "provider", "native", "main.js");

export function secret(value: unknown): Props {
  return { [SECRET_SIG_KEY]: SECRET_SIG_VALUE, value };
}

export function isSecret(value: unknown): value is { value: unknown } {
  return typeof value === "object" && value !== null && (value as Props)[SECRET_SIG_KEY] === SECRET_SIG_VALUE;
}

/** The value with every secret wrapper removed, as a reader of the state would see it decrypted. */
export function revealed(value: unknown): unknown {
  if (isSecret(value)) return revealed(value.value);
  if (Array.isArray(value)) return value.map(revealed);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, revealed(v)]));
  }
  return value;
}

export function urn(type: string, name: string): string {
  return `urn:pulumi:test::native::${type}::${name}`;
}

export function typeToken(kind: string): string {
  return `gpucloud:index:${kind}`;
}

function struct(props: Props): Struct {
  return Struct.fromJavaScript(JSON.parse(JSON.stringify(props)));
}

function plain(s: Struct | undefined): Props {
  return (s?.toJavaScript() ?? {}) as Props;
}

/** What the engine reads off a failure that carries ErrorResourceInitFailed. */
export interface InitFailure {
  message: string;
  id: string;
  properties: Props;
  inputs: Props;
  reasons: string[];
}

/** A failed call: its status code, its message and, for ErrorResourceInitFailed, the packed details. */
export class CallError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
    readonly initFailure?: InitFailure,
  ) {
    super(message);
  }
}

function initFailureOf(err: grpc.ServiceError): InitFailure | undefined {
  const found = resourceInitFailed(err);
  if (!found) return undefined;
  const { message, failed } = found;
  return {
    message,
    id: failed.getId(),
    properties: plain(failed.getProperties()),
    inputs: plain(failed.getInputs()),
    reasons: failed.getReasonsList(),
  };
}

/** What else the engine may send with a Check. */
export interface CheckExtras {
  olds?: Props;
  seed?: Uint8Array;
  autonaming?: { mode: "propose" | "enforce" | "disable"; proposedName: string };
}

export interface CheckAnswer {
  inputs: Props;
  failures: { property: string; reason: string }[];
}

export interface DiffAnswer {
  changes: "none" | "some" | "unknown";
  diffs: string[];
  replaces: string[];
  stables: string[];
  deleteBeforeReplace: boolean;
  detailedDiff: Record<string, { kind: string; inputDiff: boolean }>;
}

const KIND_NAMES = Object.fromEntries(
  Object.entries(provproto.PropertyDiff.Kind).map(([name, value]) => [value as number, name]),
);

function diffAnswer(res: provproto.DiffResponse): DiffAnswer {
  const kinds = provproto.DiffResponse.DiffChanges;
  const changes = res.getChanges();
  return {
    changes: changes === kinds.DIFF_SOME ? "some" : changes === kinds.DIFF_NONE ? "none" : "unknown",
    diffs: res.getDiffsList(),
    replaces: res.getReplacesList(),
    stables: res.getStablesList(),
    deleteBeforeReplace: res.getDeletebeforereplace(),
    detailedDiff: Object.fromEntries(
      res
        .getDetaileddiffMap()
        .getEntryList()
        .map(([name]) => {
          const d = res.getDetaileddiffMap().get(name)!;
          return [name, { kind: KIND_NAMES[d.getKind()], inputDiff: d.getInputdiff() }];
        }),
    ),
  };
}

function checkAnswer(res: provproto.CheckResponse): CheckAnswer {
  return {
    inputs: plain(res.getInputs()),
    failures: res.getFailuresList().map((f) => ({ property: f.getProperty(), reason: f.getReason() })),
  };
}

type Callback<Res> = (err: grpc.ServiceError | null, res: Res) => void;

/** The value with every secret replaced by a marker: what may show in plain text. */
function masked(value: unknown): unknown {
  if (isSecret(value)) return "[secret]";
  if (Array.isArray(value)) return value.map(masked);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, masked(v)]));
  }
  return value;
}

/** A gRPC client of a running plugin, speaking to it as the engine does. */
export class PluginClient {
  /**
   * Every answer and failure received, as JSON text with secret values masked: what the plugin
   * returned in plain text, which the key scan reads.
   */
  readonly received: string[] = [];
  private readonly client: provrpc.ResourceProviderClient;

  constructor(readonly port: number) {
    this.client = new provrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  }

  close(): void {
    this.client.close();
  }

  /** Makes a call; `view` is the answer as the test reads it (and as it is recorded). */
  private call<Res, Out>(
    invoke: (callback: Callback<Res>) => unknown,
    view: (res: Res) => Out,
  ): Promise<Out> {
    return new Promise((resolve, reject) => {
      invoke((err, res) => {
        if (err) {
          const init = initFailureOf(err);
          this.received.push(JSON.stringify(masked({ code: err.code, details: err.details, init })));
          reject(new CallError(err.code, err.details, init));
          return;
        }
        const answer = view(res);
        this.received.push(JSON.stringify(masked(answer)));
        resolve(answer);
      });
    });
  }

  pluginVersion(): Promise<string> {
    return this.call<PluginInfo, string>(
      (cb) => this.client.getPluginInfo(new Empty(), cb),
      (res) => res.getVersion(),
    );
  }

  schema(): Promise<string> {
    return this.call<provproto.GetSchemaResponse, string>(
      (cb) => this.client.getSchema(new provproto.GetSchemaRequest(), cb),
      (res) => res.getSchema(),
    );
  }

  /** The provider's inputs by short name (`apiKey`), as the engine passes stack config `gpucloud:*`. */
  checkConfig(news: Props, olds: Props = {}): Promise<CheckAnswer> {
    const req = new provproto.CheckRequest();
    req.setUrn(urn("pulumi:providers:gpucloud", "default"));
    req.setType("pulumi:providers:gpucloud");
    req.setOlds(struct(olds));
    req.setNews(struct(news));
    return this.call((cb) => this.client.checkConfig(req, cb), checkAnswer);
  }

  diffConfig(olds: Props, news: Props): Promise<DiffAnswer> {
    const req = new provproto.DiffRequest();
    req.setUrn(urn("pulumi:providers:gpucloud", "default"));
    req.setId("provider-id");
    req.setOlds(struct(olds));
    req.setOldInputs(struct(olds));
    req.setNews(struct(news));
    return this.call((cb) => this.client.diffConfig(req, cb), diffAnswer);
  }

  /** Configure as the engine sends it: `args` by short name with secrets wrapped, `variables` as `gpucloud:config:<name>`. */
  configure(
    args: Props,
    options: { variablesOnly?: boolean } = {},
  ): Promise<provproto.ConfigureResponse.AsObject> {
    const req = new provproto.ConfigureRequest();
    if (!options.variablesOnly) req.setArgs(struct(args));
    for (const [name, value] of Object.entries(revealed(args) as Props)) {
      req
        .getVariablesMap()
        .set(`gpucloud:config:${name}`, typeof value === "string" ? value : JSON.stringify(value));
    }
    req.setAcceptsecrets(true);
    req.setAcceptresources(true);
    req.setType("pulumi:providers:gpucloud");
    return this.call<provproto.ConfigureResponse, provproto.ConfigureResponse.AsObject>(
      (cb) => this.client.configure(req, cb),
      (res) => res.toObject(),
    );
  }

  /** Check as the engine sends it: `engine` adds the old inputs, the random seed and the autonaming options. */
  check(kind: string, news: Props, name = "r", engine: CheckExtras = {}): Promise<CheckAnswer> {
    const req = new provproto.CheckRequest();
    req.setUrn(urn(typeToken(kind), name));
    req.setType(typeToken(kind));
    req.setName(name);
    req.setOlds(struct(engine.olds ?? {}));
    req.setNews(struct(news));
    if (engine.seed) req.setRandomseed(engine.seed);
    if (engine.autonaming) {
      const options = new provproto.CheckRequest.AutonamingOptions();
      const modes = provproto.CheckRequest.AutonamingOptions.Mode;
      options.setMode(
        { propose: modes.PROPOSE, enforce: modes.ENFORCE, disable: modes.DISABLE }[engine.autonaming.mode],
      );
      options.setProposedName(engine.autonaming.proposedName);
      req.setAutonaming(options);
    }
    return this.call((cb) => this.client.check(req, cb), checkAnswer);
  }

  diff(kind: string, id: string, olds: Props, news: Props, name = "r"): Promise<DiffAnswer> {
    const req = new provproto.DiffRequest();
    req.setUrn(urn(typeToken(kind), name));
    req.setType(typeToken(kind));
    req.setId(id);
    req.setOlds(struct(olds));
    req.setNews(struct(news));
    return this.call((cb) => this.client.diff(req, cb), diffAnswer);
  }

  create(
    kind: string,
    inputs: Props,
    options: { preview?: boolean; name?: string } = {},
  ): Promise<{ id: string; outputs: Props }> {
    const req = new provproto.CreateRequest();
    req.setUrn(urn(typeToken(kind), options.name ?? "r"));
    req.setType(typeToken(kind));
    req.setProperties(struct(inputs));
    req.setPreview(options.preview ?? false);
    return this.call<provproto.CreateResponse, { id: string; outputs: Props }>(
      (cb) => this.client.create(req, cb),
      (res) => ({ id: res.getId(), outputs: plain(res.getProperties()) }),
    );
  }

  /** A refresh (stored outputs and inputs given) or, with neither, `pulumi import` / `get`. */
  read(
    kind: string,
    id: string,
    outputs: Props = {},
    inputs: Props = {},
    name = "r",
  ): Promise<{ id: string; outputs: Props; inputs: Props }> {
    const req = new provproto.ReadRequest();
    req.setUrn(urn(typeToken(kind), name));
    req.setType(typeToken(kind));
    req.setId(id);
    req.setProperties(struct(outputs));
    req.setInputs(struct(inputs));
    return this.call<provproto.ReadResponse, { id: string; outputs: Props; inputs: Props }>(
      (cb) => this.client.read(req, cb),
      (res) => ({ id: res.getId(), outputs: plain(res.getProperties()), inputs: plain(res.getInputs()) }),
    );
  }

  update(
    kind: string,
    id: string,
    olds: Props,
    news: Props,
    options: { preview?: boolean } = {},
  ): Promise<Props> {
    const req = new provproto.UpdateRequest();
    req.setUrn(urn(typeToken(kind), "r"));
    req.setType(typeToken(kind));
    req.setId(id);
    req.setOlds(struct(olds));
    req.setNews(struct(news));
    req.setPreview(options.preview ?? false);
    return this.call<provproto.UpdateResponse, Props>(
      (cb) => this.client.update(req, cb),
      (res) => plain(res.getProperties()),
    );
  }

  delete(kind: string, id: string, outputs: Props, name = "r"): Promise<void> {
    const req = new provproto.DeleteRequest();
    req.setUrn(urn(typeToken(kind), name));
    req.setType(typeToken(kind));
    req.setId(id);
    req.setProperties(struct(outputs));
    return this.call<Empty, void>(
      (cb) => this.client.delete(req, cb),
      () => undefined,
    );
  }

  invoke(fn: string, args: Props = {}): Promise<{ result: Props; failures: CheckAnswer["failures"] }> {
    const req = new provproto.InvokeRequest();
    req.setTok(`gpucloud:index:${fn}`);
    req.setArgs(struct(args));
    return this.call<provproto.InvokeResponse, { result: Props; failures: CheckAnswer["failures"] }>(
      (cb) => this.client.invoke(req, cb),
      (res) => ({
        result: plain(res.getReturn()),
        failures: res.getFailuresList().map((f) => ({ property: f.getProperty(), reason: f.getReason() })),
      }),
    );
  }

  cancel(): Promise<void> {
    return this.call<Empty, void>(
      (cb) => this.client.cancel(new Empty(), cb),
      () => undefined,
    );
  }

  mapping(key: string): Promise<provproto.GetMappingResponse.AsObject> {
    const req = new provproto.GetMappingRequest();
    req.setKey(key);
    return this.call<provproto.GetMappingResponse, provproto.GetMappingResponse.AsObject>(
      (cb) => this.client.getMapping(req, cb),
      (res) => res.toObject(),
    );
  }

  /**
   * Handshake as the engine sends it: with the plugin's folder as both directories when it booted the
   * plugin, without them when it attached to one already running (PULUMI_DEBUG_PROVIDERS).
   */
  handshake(
    engineAddress: string,
    directory?: string,
  ): Promise<provproto.ProviderHandshakeResponse.AsObject> {
    const req = new provproto.ProviderHandshakeRequest();
    req.setEngineAddress(engineAddress);
    if (directory !== undefined) {
      req.setRootDirectory(directory);
      req.setProgramDirectory(directory);
    }
    req.setConfigureWithUrn(true);
    req.setSupportsViews(true);
    req.setSupportsRefreshBeforeUpdate(true);
    req.setInvokeWithPreview(true);
    return this.call<provproto.ProviderHandshakeResponse, provproto.ProviderHandshakeResponse.AsObject>(
      (cb) => this.client.handshake(req, cb),
      (res) => res.toObject(),
    );
  }

  /** Attach: the engine's address, sent to a plugin it did not start. */
  attach(engineAddress: string): Promise<void> {
    const req = new PluginAttach();
    req.setAddress(engineAddress);
    return this.call<Empty, void>(
      (cb) => this.client.attach(req, cb),
      () => undefined,
    );
  }
}

/** Plugin processes still running: killed when this process exits, so none outlives the test run. */
const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

/** The plugin's process: started as the engine starts it, its output kept for inspection. */
export class PluginProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly client: PluginClient,
    private readonly output: { stdout: string; stderr: string },
  ) {}

  /** Starts `command args...` (default: the bin with an engine address it never needs) and reads the port. */
  static async start(
    options: { command?: string[]; env?: NodeJS.ProcessEnv; cwd?: string } = {},
  ): Promise<PluginProcess> {
    const [file, ...args] = options.command ?? [process.execPath, BIN, "127.0.0.1:1"];
    const child = spawn(file, args, {
      cwd: options.cwd ?? REPO_ROOT,
      env: options.env ?? withoutGpucloudEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    live.add(child);
    child.once("exit", () => live.delete(child));
    const output = { stdout: "", stderr: "" };
    child.stdout!.on("data", (c: Buffer) => (output.stdout += c.toString()));
    child.stderr!.on("data", (c: Buffer) => (output.stderr += c.toString()));
    const firstLine = await new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: child.stdout! }).once("line", resolve);
      child.once("exit", (code) =>
        reject(new Error(`plugin exited (${code}) before printing its port: ${output.stderr}`)),
      );
    });
    const port = Number(firstLine.trim());
    if (!Number.isInteger(port) || port <= 0)
      throw new Error(`plugin's first line is not a port: ${firstLine}`);
    return new PluginProcess(child, new PluginClient(port), output);
  }

  /** Everything the plugin wrote to stdout so far (its port first). */
  get stdout(): string {
    return this.output.stdout;
  }

  get stderr(): string {
    return this.output.stderr;
  }

  /** Resolves once stderr holds `text` (the plugin writes there when the engine cannot take a log line). */
  stderrContaining(text: string): Promise<string> {
    return new Promise((resolve) => {
      const look = () => {
        if (!this.output.stderr.includes(text)) return;
        this.child.stderr!.off("data", look);
        resolve(this.output.stderr);
      };
      this.child.stderr!.on("data", look);
      look();
    });
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** Sends `signal` and resolves with the exit code once the process ended. */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    this.client.close();
    if (this.exited) return this.child.exitCode;
    const exited = new Promise<number | null>((resolve) => this.child.once("exit", (code) => resolve(code)));
    this.child.kill(signal);
    return exited;
  }
}

/** This process's environment without GPUCLOUD_* settings: the plugin sees only what a test gives it. */
export function withoutGpucloudEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GPUCLOUD_")) env[k] = v;
  return { ...env, ...extra };
}
