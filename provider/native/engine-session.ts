/**
 * The engine the plugin serves now, and the two calls by which one introduces itself. An engine that boots
 * the plugin passes its address as an argument, then sends Handshake with the plugin's directories; under
 * `PULUMI_DEBUG_PROVIDERS=gpucloud:PORT` the engine dials a plugin already running, sends Handshake without
 * directories, then Attach with its address, and does the same at every later command while the plugin
 * runs on (docs/design/pulumi-machinery.md#handshake-and-attach).
 */
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import type * as plugproto from "@pulumi/pulumi/proto/plugin_pb";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import { OperationCancelledError } from "../framework/errors";
import { CAPABILITIES } from "./config-rpcs";
import type { EngineLog } from "./engine-log";

export class EngineSession {
  private cancelled = new AbortController();

  constructor(
    private readonly log: EngineLog,
    private address?: string,
  ) {}

  /** Where the engine serves its Log service and the runtime's engine calls; undefined before one said. */
  get engineAddress(): string | undefined {
    return this.address;
  }

  /** Aborted by Cancel: every operation of this engine holds it and stops its waits and retries there. */
  get signal(): AbortSignal {
    return this.cancelled.signal;
  }

  /** Cancel (Ctrl-C): the engine sends nothing new after it, so later calls of this engine fail at once. */
  cancel(): void {
    this.cancelled.abort(new OperationCancelledError());
  }

  /**
   * Handshake. Its directories are left unused: the plugin finds its package from its own files, so it
   * serves the same with them (booted by the engine) or without (attached).
   */
  handshake(req: provproto.ProviderHandshakeRequest): provproto.ProviderHandshakeResponse {
    this.meet(req.getEngineAddress());
    const res = new provproto.ProviderHandshakeResponse();
    res.setAcceptSecrets(CAPABILITIES.acceptSecrets);
    res.setAcceptResources(CAPABILITIES.acceptResources);
    res.setAcceptOutputs(CAPABILITIES.acceptOutputs);
    res.setSupportsAutonamingConfiguration(CAPABILITIES.supportsAutonamingConfiguration);
    return res;
  }

  attach(req: plugproto.PluginAttach): Empty {
    this.meet(req.getAddress());
    return new Empty();
  }

  /**
   * A new engine: its log gets the warnings from now on. A plugin left running serves one command after
   * another, so one cancelled earlier serves the next command afresh; operations still winding down keep
   * the signal they were given.
   */
  private meet(address: string): void {
    if (address) {
      this.address = address;
      this.log.attach(address);
    }
    if (this.cancelled.signal.aborted) this.cancelled = new AbortController();
  }
}
