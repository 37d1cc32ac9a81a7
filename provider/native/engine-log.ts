/**
 * Warnings and progress of the plugin's operations, shown by the engine beside the resource they concern: sent
 * to the engine's Log service when the plugin knows the engine's address (from its arguments, Handshake or
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
  private sending: Promise<void> = Promise.resolve();

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
    this.send(engproto.LogSeverity.WARNING, redact(message, call?.hidden), call?.urn ?? "", false);
  }

  /**
   * The progress reporter of the call running now: each message becomes the resource's ephemeral status,
   * which the Pulumi CLI shows beside it while its step runs (the call's URN and secrets are taken now:
   * a message may be sent from work the call shares with others).
   */
  progressOfCall(): (message: string) => void {
    const call = this.current.getStore();
    return (message) =>
      this.send(engproto.LogSeverity.INFO, redact(message, call?.hidden), call?.urn ?? "", true);
  }

  private send(severity: engproto.LogSeverity, text: string, urn: string, ephemeral: boolean): void {
    const line = severity === engproto.LogSeverity.WARNING ? `warning: ${text}` : `info: ${text}`;
    if (!this.client) {
      toStderr(line);
      return;
    }
    const client = this.client;
    const req = new engproto.LogRequest();
    req.setSeverity(severity);
    req.setMessage(text);
    req.setUrn(urn);
    req.setEphemeral(ephemeral);
    // One line at a time: a resource's status is its latest message, so they must arrive in order.
    this.sending = this.sending.then(
      () =>
        new Promise<void>((resolve) =>
          client.log(req, new grpc.Metadata(), { deadline: Date.now() + LOG_DEADLINE_MS }, (err) => {
            if (err) toStderr(line);
            resolve();
          }),
        ),
    );
  }

  close(): void {
    this.client?.close();
  }
}

function toStderr(line: string): void {
  process.stderr.write(`${line}\n`);
}
