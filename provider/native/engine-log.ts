/**
 * Warnings of the plugin's operations, shown by the engine beside the resource they concern: sent to the
 * engine's Log service when the plugin knows the engine's address (from its arguments, Handshake or
 * Attach) and it answers, written to stderr otherwise (the engine shows a plugin's stderr too, without the
 * resource).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import * as grpc from "@grpc/grpc-js";
import * as engrpc from "@pulumi/pulumi/proto/engine_grpc_pb";
import * as engproto from "@pulumi/pulumi/proto/engine_pb";
import { redact } from "./redact";

/** How long one log line may take to reach the engine before it goes to stderr instead. */
const LOG_DEADLINE_MS = 5000;

export class EngineLog {
  private client?: engrpc.EngineClient;
  private address?: string;
  /** The call running: its resource's URN, for the warnings it raises, and the texts of its secret inputs. */
  private readonly current = new AsyncLocalStorage<{ urn: string; hidden: readonly string[] }>();

  constructor(engineAddress?: string) {
    if (engineAddress) this.attach(engineAddress);
  }

  /** Lines go to the engine at `engineAddress` from now on (an attached plugin meets a new engine each run). */
  attach(engineAddress: string): void {
    if (engineAddress === this.address) return;
    this.client?.close();
    this.client = new engrpc.EngineClient(engineAddress, grpc.credentials.createInsecure());
    this.address = engineAddress;
  }

  /** Runs `work` as the call for `urn`: warnings it raises name that resource and never show `hidden`. */
  within<T>(urn: string, hidden: readonly string[], work: () => T): T {
    return this.current.run({ urn, hidden }, work);
  }

  warn(message: string): void {
    const call = this.current.getStore();
    const text = redact(message, call?.hidden);
    const urn = call?.urn ?? "";
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
