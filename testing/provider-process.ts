/**
 * One provider plugin process and a gRPC client that speaks Pulumi's ResourceProvider protocol to it, the
 * way the Pulumi engine does: the process prints its port as its first stdout line and serves until killed.
 * It knows nothing of dynamic providers or of `__provider`: the front doors (front-door.ts) add that.
 *
 * gRPC and the protocol's message classes are taken from the @pulumi/pulumi this package runs with, so that
 * the generated client and the channel credentials come from one copy of @grpc/grpc-js.
 */
import { createRequire } from "node:module";
import * as path from "node:path";
import type * as GrpcModule from "@grpc/grpc-js";
import type * as StructProto from "google-protobuf/google/protobuf/struct_pb";
import type * as ProviderGrpc from "@pulumi/pulumi/proto/provider_grpc_pb";
import type * as ErrorsProto from "@pulumi/pulumi/proto/errors_pb";
import type * as ProviderProto from "@pulumi/pulumi/proto/provider_pb";
import type * as StatusProto from "@pulumi/pulumi/proto/status_pb";
import { PluginProcess, type PluginProcessOptions } from "./plugin-process";
import { reveal, type Props } from "./wire";

export interface CheckFailure {
  property: string;
  reason: string;
}

/** Check failures as messages list them: `property: reason; ...`. */
export function failureList(failures: readonly CheckFailure[]): string {
  return failures.map((f) => `${f.property}: ${f.reason}`).join("; ");
}
export interface CheckResult {
  inputs: Props;
  failures: CheckFailure[];
}
export type DiffChanges = "none" | "some" | "unknown";
export interface DiffResult {
  changes: DiffChanges;
  replaces: string[];
  deleteBeforeReplace: boolean;
}
export interface CreateResult {
  id: string;
  outputs: Props;
}
export interface ReadResult {
  /** Empty when the resource is gone. */
  id: string;
  outputs: Props;
  inputs?: Props;
}

/** What the engine hands a provider's Construct: the component, its inputs and where to register its children. */
export interface ConstructCall {
  project: string;
  stack: string;
  /** The stack config as text, fully qualified keys, and which of them are secret. */
  config: Record<string, string>;
  configSecretKeys: string[];
  dryRun: boolean;
  /** The engine's resource monitor, `host:port`. */
  monitorEndpoint: string;
  type: string;
  name: string;
  parent?: string;
  /** In wire form: secrets wrapped, preview unknowns as the sentinel. */
  inputs: Props;
  dependencies: string[];
}

export interface ConstructResult {
  urn: string;
  /** The component's outputs, in wire form. */
  state: Props;
}

/** The provider refused a component's inputs (Pulumi's InputPropertiesError): each failure names its input. */
export class InputPropertiesFailedError extends Error {
  override readonly name = "InputPropertiesFailedError";
  constructor(
    message: string,
    readonly failures: CheckFailure[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The provider made the resource (it has an id and outputs) but could not finish it: Pulumi's
 * ErrorResourceInitFailed. The engine keeps such a resource in its state with these init errors.
 */
export class ResourceInitFailedError extends Error {
  override readonly name = "ResourceInitFailedError";
  constructor(
    message: string,
    readonly id: string,
    readonly outputs: Props,
    readonly reasons: string[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A provider call that failed: the gRPC status code the provider answered, and what the engine makes of
 * it. UNKNOWN, INTERNAL or DATA_LOSS answering a Read, an Update or a Delete leaves the resource's status
 * unknown, and the engine then reports the whole update as possibly corrupt (`maybeCorrupt`); every other
 * code is a failure it understands, the resource as the state had it (Pulumi's provider_plugin.go,
 * resourceStateAndError). Since Pulumi 3.11x the engine keeps no status for a failed Create.
 */
export class ProviderCallError extends Error {
  override readonly name = "ProviderCallError";
  constructor(
    message: string,
    /** The gRPC status code (`grpc.status`). */
    readonly code: number,
    readonly statusUnknown: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The calls whose failure's status the engine carries to the update's result. */
const STATUS_CARRYING = new Set<Rpc>(["read", "update", "delete"]);

type Rpc =
  "configure" | "checkConfig" | "check" | "diff" | "create" | "read" | "update" | "delete" | "construct";

interface Protocol {
  grpc: typeof GrpcModule;
  Struct: typeof StructProto.Struct;
  provrpc: typeof ProviderGrpc;
  provproto: typeof ProviderProto;
  statusproto: typeof StatusProto;
  errorsproto: typeof ErrorsProto;
}

let protocol: Protocol | undefined;

/** The root of the @pulumi/pulumi this package resolves (the user's single copy when installed as a peer). */
export function pulumiRoot(): string {
  return path.dirname(require.resolve("@pulumi/pulumi/package.json"));
}

/** gRPC, protobuf's Struct and a `require` from the @pulumi/pulumi this package runs with, for its protocols. */
export function pulumiProtocolBase(): {
  grpc: typeof GrpcModule;
  Struct: typeof StructProto.Struct;
  fromPulumi: NodeJS.Require;
} {
  const fromPulumi = createRequire(path.join(pulumiRoot(), "package.json"));
  return {
    grpc: fromPulumi("@grpc/grpc-js"),
    Struct: (fromPulumi("google-protobuf/google/protobuf/struct_pb") as typeof StructProto).Struct,
    fromPulumi,
  };
}

function loadProtocol(): Protocol {
  if (protocol) return protocol;
  const { grpc, Struct, fromPulumi } = pulumiProtocolBase();
  protocol = {
    grpc,
    Struct,
    provrpc: fromPulumi("./proto/provider_grpc_pb"),
    provproto: fromPulumi("./proto/provider_pb"),
    statusproto: fromPulumi("./proto/status_pb"),
    errorsproto: fromPulumi("./proto/errors_pb"),
  };
  return protocol;
}

function struct(props: Props): StructProto.Struct {
  return loadProtocol().Struct.fromJavaScript(
    props as Parameters<typeof StructProto.Struct.fromJavaScript>[0],
  );
}

function plain(s: StructProto.Struct | undefined): Props {
  return (s?.toJavaScript() ?? {}) as Props;
}

type Callback<Res> = (err: GrpcModule.ServiceError | null, res: Res) => void;

export class ProviderProcess {
  private constructor(
    private readonly plugin: PluginProcess,
    private readonly client: ProviderGrpc.ResourceProviderClient,
  ) {}

  static async start(options: PluginProcessOptions): Promise<ProviderProcess> {
    const { grpc, provrpc } = loadProtocol();
    const plugin = await PluginProcess.start(options);
    const client = new provrpc.ResourceProviderClient(
      `127.0.0.1:${plugin.port}`,
      grpc.credentials.createInsecure(),
    );
    return new ProviderProcess(plugin, client);
  }

  /** What the process wrote to stderr so far (the dynamic-provider server logs provider failures there). */
  get stderr(): string {
    return this.plugin.stderr;
  }

  async stop(): Promise<void> {
    this.client.close();
    await this.plugin.stop();
  }

  private call<Res>(rpc: Rpc, invoke: (callback: Callback<Res>) => unknown): Promise<Res> {
    return new Promise((resolve, reject) => {
      invoke((err, res) => (err ? reject(this.failure(rpc, err)) : resolve(res)));
    });
  }

  /** The provider's own message; the structured ErrorResourceInitFailed when the call carries one. */
  private failure(rpc: Rpc, err: GrpcModule.ServiceError): Error {
    if (this.plugin.exited) return this.plugin.exitedDuringCall();
    // The gRPC error stays the cause: its metadata is what the provider answered.
    const message = err.details || err.message;
    return initFailure(err, message) ?? inputFailure(err, message) ?? callFailure(rpc, err, message);
  }

  /** Configure with the provider's configuration; wrapped secrets in `args` stay wrapped when `acceptSecrets`. */
  async configure(args: Props, variables: Record<string, string> = {}): Promise<{ acceptSecrets: boolean }> {
    const { provproto } = loadProtocol();
    const req = new provproto.ConfigureRequest();
    req.setArgs(struct(args));
    for (const [key, value] of Object.entries(variables)) req.getVariablesMap().set(key, value);
    req.setAcceptsecrets(true);
    const res = await this.call<ProviderProto.ConfigureResponse>("configure", (cb) =>
      this.client.configure(req, cb),
    );
    return { acceptSecrets: res.getAcceptsecrets() };
  }

  /** CheckConfig; undefined when the provider does not implement it (the engine then skips it too). */
  async checkConfig(urn: string, olds: Props, news: Props): Promise<CheckResult | undefined> {
    const { grpc, provproto } = loadProtocol();
    const req = change(new provproto.CheckRequest(), urn, olds, news);
    const res = await new Promise<ProviderProto.CheckResponse | undefined>((resolve, reject) =>
      this.client.checkConfig(req, (err, answer) => {
        if (err?.code === grpc.status.UNIMPLEMENTED) resolve(undefined);
        else if (err) reject(this.failure("checkConfig", err));
        else resolve(answer);
      }),
    );
    return res && checkResult(res);
  }

  async check(urn: string, olds: Props, news: Props): Promise<CheckResult> {
    const { provproto } = loadProtocol();
    const req = change(new provproto.CheckRequest(), urn, olds, news);
    const res = await this.call<ProviderProto.CheckResponse>("check", (cb) => this.client.check(req, cb));
    return checkResult(res);
  }

  async diff(urn: string, id: string, olds: Props, news: Props): Promise<DiffResult> {
    const { provproto } = loadProtocol();
    const req = change(new provproto.DiffRequest(), urn, olds, news);
    req.setId(id);
    const res = await this.call<ProviderProto.DiffResponse>("diff", (cb) => this.client.diff(req, cb));
    const kinds = provproto.DiffResponse.DiffChanges;
    const changes = res.getChanges();
    return {
      changes: changes === kinds.DIFF_SOME ? "some" : changes === kinds.DIFF_NONE ? "none" : "unknown",
      replaces: res.getReplacesList(),
      deleteBeforeReplace: res.getDeletebeforereplace(),
    };
  }

  async create(urn: string, inputs: Props): Promise<CreateResult> {
    const { provproto } = loadProtocol();
    const req = new provproto.CreateRequest();
    req.setUrn(urn);
    req.setProperties(struct(inputs));
    const res = await this.call<ProviderProto.CreateResponse>("create", (cb) => this.client.create(req, cb));
    return { id: res.getId(), outputs: plain(res.getProperties()) };
  }

  async read(urn: string, id: string, outputs: Props, inputs: Props): Promise<ReadResult> {
    const { provproto } = loadProtocol();
    const req = new provproto.ReadRequest();
    req.setUrn(urn);
    req.setId(id);
    req.setProperties(struct(outputs));
    req.setInputs(struct(inputs));
    const res = await this.call<ProviderProto.ReadResponse>("read", (cb) => this.client.read(req, cb));
    return {
      id: res.getId(),
      outputs: plain(res.getProperties()),
      inputs: res.getInputs() ? plain(res.getInputs()) : undefined,
    };
  }

  async update(urn: string, id: string, olds: Props, news: Props): Promise<Props> {
    const { provproto } = loadProtocol();
    const req = change(new provproto.UpdateRequest(), urn, olds, news);
    req.setId(id);
    const res = await this.call<ProviderProto.UpdateResponse>("update", (cb) => this.client.update(req, cb));
    return plain(res.getProperties());
  }

  /** Construct: the provider makes the component, registering it and its children with `call.monitorEndpoint`. */
  async construct(call: ConstructCall): Promise<ConstructResult> {
    const { provproto } = loadProtocol();
    const req = new provproto.ConstructRequest();
    req.setProject(call.project);
    req.setStack(call.stack);
    for (const [key, value] of Object.entries(call.config)) req.getConfigMap().set(key, value);
    req.setConfigsecretkeysList(call.configSecretKeys);
    req.setDryrun(call.dryRun);
    // The engine's default: no limit on the steps it runs at once (1 would make the provider's runtime serial).
    req.setParallel(2147483647);
    req.setMonitorendpoint(call.monitorEndpoint);
    req.setType(call.type);
    req.setName(call.name);
    req.setParent(call.parent ?? "");
    req.setInputs(struct(call.inputs));
    req.setDependenciesList(call.dependencies);
    const res = await this.call<ProviderProto.ConstructResponse>("construct", (cb) =>
      this.client.construct(req, cb),
    );
    return { urn: res.getUrn(), state: plain(res.getState()) };
  }

  async delete(urn: string, id: string, outputs: Props): Promise<void> {
    const { provproto } = loadProtocol();
    const req = new provproto.DeleteRequest();
    req.setUrn(urn);
    req.setId(id);
    req.setProperties(struct(outputs));
    await this.call("delete", (cb) => this.client.delete(req, cb));
  }
}

/** The fields a Check, CheckConfig, Diff or Update request shares: the resource and its old and new properties. */
interface ChangeRequest {
  setUrn(urn: string): unknown;
  setOlds(olds?: StructProto.Struct): unknown;
  setNews(news?: StructProto.Struct): unknown;
}

function change<R extends ChangeRequest>(req: R, urn: string, olds: Props, news: Props): R {
  req.setUrn(urn);
  req.setOlds(struct(olds));
  req.setNews(struct(news));
  return req;
}

function checkResult(res: ProviderProto.CheckResponse): CheckResult {
  return {
    inputs: plain(res.getInputs()),
    failures: res.getFailuresList().map((f) => ({ property: f.getProperty(), reason: f.getReason() })),
  };
}

/** The `google.rpc.Status` a provider put in the failure's `grpc-status-details-bin` metadata, if any. */
function statusDetails(err: GrpcModule.ServiceError): StatusProto.Status | undefined {
  const [bin] = err.metadata?.get("grpc-status-details-bin") ?? [];
  if (!bin) return undefined;
  const { statusproto } = loadProtocol();
  return statusproto.Status.deserializeBinary(typeof bin === "string" ? Buffer.from(bin) : bin);
}

/** A `pulumirpc.InputPropertiesError` in the status details: how a provider refuses a component's inputs. */
function inputFailure(err: GrpcModule.ServiceError, message: string): InputPropertiesFailedError | undefined {
  const { errorsproto } = loadProtocol();
  for (const detail of statusDetails(err)?.getDetailsList() ?? []) {
    const refused = detail.unpack(
      errorsproto.InputPropertiesError.deserializeBinary,
      "pulumirpc.InputPropertiesError",
    );
    if (refused) {
      const failures = refused
        .getErrorsList()
        .map((e) => ({ property: e.getPropertyPath(), reason: e.getReason() }));
      return new InputPropertiesFailedError(message, failures, { cause: err });
    }
  }
  return undefined;
}

/**
 * A `google.rpc.Status` in the `grpc-status-details-bin` metadata whose details hold a
 * `pulumirpc.ErrorResourceInitFailed`: how a provider reports a resource it made but could not finish.
 */
function initFailure(err: GrpcModule.ServiceError, message: string): ResourceInitFailedError | undefined {
  const status = statusDetails(err);
  if (!status) return undefined;
  const { provproto } = loadProtocol();
  for (const detail of status.getDetailsList()) {
    const failed = detail.unpack(
      provproto.ErrorResourceInitFailed.deserializeBinary,
      "pulumirpc.ErrorResourceInitFailed",
    );
    if (failed) {
      return new ResourceInitFailedError(
        message,
        failed.getId(),
        reveal(plain(failed.getProperties())) as Props,
        failed.getReasonsList(),
        { cause: err },
      );
    }
  }
  return undefined;
}

function callFailure(rpc: Rpc, err: GrpcModule.ServiceError, message: string): ProviderCallError {
  const { status } = loadProtocol().grpc;
  const unknownCodes: number[] = [status.UNKNOWN, status.INTERNAL, status.DATA_LOSS];
  const statusUnknown = STATUS_CARRYING.has(rpc) && unknownCodes.includes(err.code);
  return new ProviderCallError(message, err.code, statusUnknown, { cause: err });
}
