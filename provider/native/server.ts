/**
 * The native Pulumi resource plugin (docs/design/contracts.md#the-native-plugin): Pulumi's gRPC ResourceProvider
 * service, built from the
 * same resource definitions as the dynamic providers and served on 127.0.0.1. The engine's protocol is
 * implemented here with @grpc/grpc-js and the stubs that ship in @pulumi/pulumi, not with
 * `provider.main` of @pulumi/pulumi (3.248's never passes configuration to the provider, has no
 * CheckConfig or DiffConfig, and drops stables and detailed diffs).
 *
 * Methods left out (Parameterize, Call, List) answer UNIMPLEMENTED, grpc-js's default for a method
 * without a handler, which the engine reads as "not supported" and works without. Construct makes the
 * package's components (./construct.ts); Handshake and Attach introduce the engine (./engine-session.ts).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import type { Struct } from "google-protobuf/google/protobuf/struct_pb";
import * as plugproto from "@pulumi/pulumi/proto/plugin_pb";
import * as provrpc from "@pulumi/pulumi/proto/provider_grpc_pb";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import type { PackageSchema } from "../codegen/package-schema";
import { routeProgress, routeWarnings } from "../framework/context";
import type { AnyResourceDefinition } from "../framework/define-resource";
import { packageRoot, packageVersion } from "../package-root";
import { RESOURCES } from "../resources";
import { checkConfig, configureProvider, diffConfig } from "./config-rpcs";
import { EngineLog } from "./engine-log";
import { EngineSession } from "./engine-session";
import { RpcError } from "./errors";
import { rpcFailure } from "./rpc-failure";
import { invoke } from "./invoke";
import { redact, secretTexts } from "./redact";
import { ResourceRpcs } from "./resource-rpcs";
import { secretValues } from "./wire";

export interface NativeProviderOptions {
  /** The engine's address, for its log; the plugin works without it (Handshake and Attach bring it too). */
  engineAddress?: string;
  /**
   * Default: the package's resources.
   * @internal
   */
  definitions?: readonly AnyResourceDefinition[];
  /** Default 0: a free port. */
  port?: number;
}

export interface NativeProvider {
  port: number;
  /** Stops taking calls and waits for those under way. */
  close(): Promise<void>;
}

/** The largest request the engine sends: @pulumi/pulumi's maxRPCMessageSize. */
const MAX_MESSAGE_BYTES = 400 * 1024 * 1024;

/** What an RPC handler does with a request: its answer, or a failure the engine can read. */
type Handler<Req, Res> = (req: Req) => Res | Promise<Res>;

function withUrn(req: unknown): string {
  const maybe = req as { getUrn?: () => string };
  return typeof maybe.getUrn === "function" ? maybe.getUrn() : "";
}

/** The requests' fields that carry property values, secrets wrapped by the engine. */
const VALUE_FIELDS = ["getNews", "getOlds", "getOldInputs", "getProperties", "getInputs", "getArgs"] as const;

/**
 * The texts of every value the request marked secret: the one place where what leaves the plugin is
 * cleaned of them, whichever resource, data source or setting made the message.
 */
function secretsOf(req: unknown): string[] {
  const fields = req as Partial<Record<(typeof VALUE_FIELDS)[number], () => Struct | undefined>>;
  return secretTexts(VALUE_FIELDS.flatMap((field) => secretValues(fields[field]?.call(req))));
}

/** Check failures (of CheckConfig, Check and Invoke) as the user reads them: without the secret values. */
function failuresRedacted<Res>(res: Res, hidden: readonly string[]): Res {
  const failures = (res as { getFailuresList?: () => provproto.CheckFailure[] }).getFailuresList?.();
  for (const failure of failures ?? []) failure.setReason(redact(failure.getReason(), hidden));
  return res;
}

function refusedAfterCancel(): RpcError {
  return new RpcError(
    grpc.status.CANCELLED,
    "the operation was cancelled: this provider was cancelled (Ctrl-C) and starts nothing new; nothing was sent to the cloud. Run the command again.",
  );
}

export async function serveNativeProvider(options: NativeProviderOptions = {}): Promise<NativeProvider> {
  const root = packageRoot();
  const schemaText = fs.readFileSync(path.join(root, "schema.json"), "utf8");
  const schema = JSON.parse(schemaText) as PackageSchema;
  const version = packageVersion(root);
  const resources = new ResourceRpcs(options.definitions ?? RESOURCES);
  const log = new EngineLog(options.engineAddress);
  routeWarnings((message) => log.warn(message));
  routeProgress(() => log.progressOfCall());
  const session = new EngineSession(log, options.engineAddress);

  const unary =
    <Req, Res>(handle: Handler<Req, Res>, afterCancel = false): grpc.handleUnaryCall<Req, Res> =>
    (call, callback) => {
      const hidden = secretsOf(call.request);
      log
        .within(withUrn(call.request), hidden, async () => {
          if (!afterCancel && session.signal.aborted) throw refusedAfterCancel();
          return handle(call.request);
        })
        .then(
          (res) => callback(null, failuresRedacted(res, hidden)),
          (err: unknown) => callback(rpcFailure(err, hidden), null),
        );
    };

  const service: Partial<provrpc.IResourceProviderServer> = {
    handshake: unary((req: provproto.ProviderHandshakeRequest) => session.handshake(req), true),
    attach: unary((req: plugproto.PluginAttach) => session.attach(req), true),
    getPluginInfo: unary(() => new plugproto.PluginInfo().setVersion(version), true),
    getSchema: unary((req: provproto.GetSchemaRequest) => {
      if (req.getSubpackageName()) {
        throw new RpcError(
          grpc.status.NOT_FOUND,
          `this provider has no sub-package ${req.getSubpackageName()}`,
        );
      }
      return new provproto.GetSchemaResponse().setSchema(schemaText);
    }, true),
    checkConfig: unary(checkConfig),
    diffConfig: unary(diffConfig),
    configure: unary(configureProvider),
    check: unary((req: provproto.CheckRequest) => resources.check(req)),
    diff: unary((req: provproto.DiffRequest) => resources.diff(req)),
    create: unary((req: provproto.CreateRequest) => resources.create(req, session.signal)),
    read: unary((req: provproto.ReadRequest) => resources.read(req, session.signal)),
    update: unary((req: provproto.UpdateRequest) => resources.update(req, session.signal)),
    delete: unary(async (req: provproto.DeleteRequest) => {
      await resources.delete(req, session.signal);
      return new Empty();
    }),
    invoke: unary((req: provproto.InvokeRequest) => invoke(req, schema.functions)),
    // Loaded at the first Construct: it takes in @pulumi/pulumi's whole runtime, which every other call does
    // without (the plugin starts in a quarter of the time).
    construct: unary(async (req: provproto.ConstructRequest) =>
      (await import("./construct")).construct(req, session.engineAddress),
    ),
    // Aborts every operation under way: each stops at its next wait or pause (a request already sent
    // finishes within its own timeout) and fails saying what it left behind; a create that made an
    // instance fails with ErrorResourceInitFailed and its id, so the state keeps it (resource-rpcs.ts).
    cancel: unary(() => {
      session.cancel();
      return new Empty();
    }, true),
    // No conversion mappings: an empty answer, which the engine expects from a provider without any.
    getMapping: unary(() => new provproto.GetMappingResponse(), true),
    getMappings: unary(() => new provproto.GetMappingsResponse(), true),
  };

  // The engine sends messages of up to 400 MB (@pulumi/pulumi's own servers take as much, runtime/settings.js):
  // grpc's default of 4 MB would refuse a large Check with grpc's own text.
  const server = new grpc.Server({ "grpc.max_receive_message_length": MAX_MESSAGE_BYTES });
  server.addService(provrpc.ResourceProviderService, service as grpc.UntypedServiceImplementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `127.0.0.1:${options.port ?? 0}`,
      grpc.ServerCredentials.createInsecure(),
      (err, bound) => (err ? reject(err) : resolve(bound)),
    ),
  );
  return {
    port,
    close: () =>
      new Promise<void>((resolve) =>
        server.tryShutdown(() => {
          log.close();
          resolve();
        }),
      ),
  };
}
