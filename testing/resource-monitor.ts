/**
 * The engine's resource monitor, served over gRPC as the Pulumi engine serves it to a provider's
 * Construct: a multi-language component's provider registers the component and its children here, and
 * the engine plans and applies each child as it does a program's (engine/deployment.ts). It answers what
 * @pulumi/pulumi's runtime asks of a monitor: the features it supports, each registration (after the
 * child's step is done, with its URN, id and outputs) and the component's outputs.
 *
 * gRPC and the protocol's message classes come from the @pulumi/pulumi this package runs with, as the
 * provider client's do (provider-process.ts).
 */
import type * as GrpcModule from "@grpc/grpc-js";
import type * as EmptyProto from "google-protobuf/google/protobuf/empty_pb";
import type * as ResourceGrpc from "@pulumi/pulumi/proto/resource_grpc_pb";
import type * as ResourceProto from "@pulumi/pulumi/proto/resource_pb";
import type { Registration, Resolution } from "./program";
import { pulumiProtocolBase } from "./provider-process";
import type { Props } from "./wire";

/** What the engine does with what a Construct registers; the URN is the engine's (program.ts urnOf). */
export interface MonitorHandlers {
  urnOf(type: string, name: string, parent: string): string;
  register(registration: Registration): Promise<Resolution>;
  registerOutputs(urn: string, outputs: Props): void;
}

/** The features this engine gives a provider's program: secrets travel wrapped; nothing else is offered. */
const SUPPORTED_FEATURES = new Set(["secrets"]);

interface Protocol {
  grpc: typeof GrpcModule;
  Empty: typeof EmptyProto.Empty;
  resrpc: typeof ResourceGrpc;
  resproto: typeof ResourceProto;
  Struct: ReturnType<typeof pulumiProtocolBase>["Struct"];
}

function protocol(): Protocol {
  const { grpc, Struct, fromPulumi } = pulumiProtocolBase();
  return {
    grpc,
    Struct,
    Empty: (fromPulumi("google-protobuf/google/protobuf/empty_pb") as typeof EmptyProto).Empty,
    resrpc: fromPulumi("./proto/resource_grpc_pb"),
    resproto: fromPulumi("./proto/resource_pb"),
  };
}

/** A failure the monitor answers with: its own message, which the provider's runtime shows. */
export class MonitorCallError extends Error {
  constructor(
    message: string,
    readonly code: GrpcModule.status,
  ) {
    super(message);
  }
}

/** What the engine answers a registration once the deployment stopped: its monitor is going away. */
export function deploymentStopped(): MonitorCallError {
  return new MonitorCallError("the deployment stopped after a failure", protocol().grpc.status.UNAVAILABLE);
}

export class ResourceMonitor {
  private handlers?: MonitorHandlers;

  private port = 0;

  private constructor(private readonly server: GrpcModule.Server) {}

  /** Serves on a free loopback port; calls are refused until `serve` gives them handlers. */
  static async start(): Promise<ResourceMonitor> {
    const { grpc, resrpc } = protocol();
    const server = new grpc.Server();
    const monitor = new ResourceMonitor(server);
    const implementation: Partial<ResourceGrpc.IResourceMonitorServer> = {
      supportsFeature: (call, callback) => monitor.supportsFeature(call.request, callback),
      registerResource: (call, callback) => monitor.registerResource(call.request, callback),
      registerResourceOutputs: (call, callback) => monitor.registerResourceOutputs(call.request, callback),
    };
    server.addService(
      resrpc.ResourceMonitorService,
      implementation as GrpcModule.UntypedServiceImplementation,
    );
    monitor.port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, bound) =>
        err ? reject(err) : resolve(bound),
      ),
    );
    return monitor;
  }

  /** Where a provider's runtime dials the monitor: `host:port`. */
  get endpoint(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Where this operation's registrations go; undefined refuses them (no operation is under way). */
  serve(handlers: MonitorHandlers | undefined): void {
    this.handlers = handlers;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.tryShutdown(() => resolve()));
  }

  private supportsFeature(
    req: ResourceProto.SupportsFeatureRequest,
    callback: GrpcModule.sendUnaryData<ResourceProto.SupportsFeatureResponse>,
  ): void {
    const { resproto } = protocol();
    callback(null, new resproto.SupportsFeatureResponse().setHassupport(SUPPORTED_FEATURES.has(req.getId())));
  }

  private registerResource(
    req: ResourceProto.RegisterResourceRequest,
    callback: GrpcModule.sendUnaryData<ResourceProto.RegisterResourceResponse>,
  ): void {
    const { grpc, resproto, Struct } = protocol();
    const handlers = this.handlers;
    if (!handlers) return callback(notServing(grpc), null);
    const propertyDependencies: Record<string, string[]> = {};
    req.getPropertydependenciesMap().forEach((deps, property) => {
      propertyDependencies[property] = deps.getUrnsList();
    });
    const urn = handlers.urnOf(req.getType(), req.getName(), req.getParent());
    handlers
      .register({
        urn,
        type: req.getType(),
        name: req.getName(),
        ...(req.getParent() ? { parent: req.getParent() } : {}),
        custom: req.getCustom(),
        remote: req.getRemote(),
        inputs: (req.getObject()?.toJavaScript() ?? {}) as Props,
        dependencies: req.getDependenciesList(),
        propertyDependencies,
        additionalSecretOutputs: req.getAdditionalsecretoutputsList(),
      })
      .then(
        (resolution) => {
          const res = new resproto.RegisterResourceResponse();
          res.setUrn(urn);
          res.setId(resolution.id ?? "");
          res.setObject(Struct.fromJavaScript(resolution.outputs as never));
          res.setResult(resproto.Result.SUCCESS);
          callback(null, res);
        },
        (err: unknown) => callback(callFailure(grpc, err), null),
      );
  }

  private registerResourceOutputs(
    req: ResourceProto.RegisterResourceOutputsRequest,
    callback: GrpcModule.sendUnaryData<EmptyProto.Empty>,
  ): void {
    const { grpc, Empty } = protocol();
    const handlers = this.handlers;
    if (!handlers) return callback(notServing(grpc), null);
    handlers.registerOutputs(req.getUrn(), (req.getOutputs()?.toJavaScript() ?? {}) as Props);
    callback(null, new Empty());
  }
}

function notServing(grpc: typeof GrpcModule): Partial<GrpcModule.ServiceError> {
  return { code: grpc.status.UNAVAILABLE, details: "the engine is not running an operation" };
}

function callFailure(grpc: typeof GrpcModule, err: unknown): Partial<GrpcModule.ServiceError> {
  const code = err instanceof MonitorCallError ? err.code : grpc.status.UNKNOWN;
  return { code, details: err instanceof Error ? err.message : String(err) };
}
