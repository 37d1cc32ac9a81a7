/**
 * The engine's Log service, as a provider plugin reaches it: the plugin is started with the engine's
 * address and sends its diagnostics there, each naming the resource it concerns, the ephemeral ones being
 * the status the Pulumi CLI shows beside a resource while it is created. The harness keeps every line,
 * so a test (or a user of pulumi-gpucloud/testing) reads what a person running `pulumi up` would see.
 */
import type * as GrpcModule from "@grpc/grpc-js";
import type * as EngineGrpc from "@pulumi/pulumi/proto/engine_grpc_pb";
import type * as EngineProto from "@pulumi/pulumi/proto/engine_pb";
import { pulumiProtocolBase } from "./provider-process";

export type Severity = "debug" | "info" | "warning" | "error";

/** One line a provider sent to the engine's log. */
export interface EngineMessage {
  severity: Severity;
  message: string;
  /** The resource it concerns; empty for the provider as a whole. */
  urn: string;
  /** A status shown while the resource's step runs, not kept in the output once it is done. */
  ephemeral: boolean;
}

const SEVERITIES: Record<number, Severity> = { 0: "debug", 1: "info", 2: "warning", 3: "error" };

export class EngineLogServer {
  private constructor(
    private readonly server: GrpcModule.Server,
    /** host:port, as the engine passes its address to a plugin. */
    readonly address: string,
    /** Every line received so far, in order. */
    readonly messages: readonly EngineMessage[],
  ) {}

  static async start(): Promise<EngineLogServer> {
    const { grpc, fromPulumi } = pulumiProtocolBase();
    const engrpc = fromPulumi("./proto/engine_grpc_pb") as typeof EngineGrpc;
    const { Empty } = fromPulumi("google-protobuf/google/protobuf/empty_pb") as {
      Empty: new () => unknown;
    };
    const messages: EngineMessage[] = [];
    const server = new grpc.Server();
    server.addService(engrpc.EngineService, {
      log: (
        call: GrpcModule.ServerUnaryCall<EngineProto.LogRequest, unknown>,
        callback: GrpcModule.sendUnaryData<unknown>,
      ) => {
        messages.push({
          severity: SEVERITIES[call.request.getSeverity()] ?? "info",
          message: call.request.getMessage(),
          urn: call.request.getUrn(),
          ephemeral: call.request.getEphemeral(),
        });
        callback(null, new Empty());
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, bound) =>
        err ? reject(err) : resolve(bound),
      ),
    );
    return new EngineLogServer(server, `127.0.0.1:${port}`, messages);
  }

  close(): void {
    this.server.forceShutdown();
  }
}
