/**
 * Warnings of the plugin's operations, shown by the engine beside the resource they concern: sent to the
 * engine's Log service when the plugin was given the engine's address and it answers, written to stderr
 * otherwise (the engine shows a plugin's stderr too, without the resource).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import * as grpc from "@grpc/grpc-js";
import * as engrpc from "@pulumi/pulumi/proto/engine_grpc_pb";
import * as engproto from "@pulumi/pulumi/proto/engine_pb";
import { redact } from "./redact";

/** How long one log line may take to reach the engine before it goes to stderr instead. */
const LOG_DEADLINE_MS = 5000;

export class EngineLog {
  private readonly client?: engrpc.EngineClient;
  /** The URN of the resource whose call is running, for the warnings it raises. */
  private readonly current = new AsyncLocalStorage<string>();

  constructor(engineAddress?: string) {
    if (engineAddress)
      this.client = new engrpc.EngineClient(engineAddress, grpc.credentials.createInsecure());
  }

  /** Runs `work` as the call for `urn`: warnings it raises name that resource. */
  within<T>(urn: string, work: () => T): T {
    return this.current.run(urn, work);
  }

  warn(message: string): void {
    const text = redact(message);
    const urn = this.current.getStore() ?? "";
    if (!this.client) {
      toStderr(text);
      return;
    }
    const req = new engproto.LogRequest();
    req.setSeverity(engproto.LogSeverity.WARNING);
    req.setMessage(text);
    req.setUrn(urn);
    this.client.log(req, new grpc.Metadata(), { deadline: Date.now() + LOG_DEADLINE_MS }, (err) => {
      if (err) toStderr(text);
    });
  }

  close(): void {
    this.client?.close();
  }
}

function toStderr(text: string): void {
  process.stderr.write(`warning: ${text}\n`);
}
