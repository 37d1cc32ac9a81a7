/**
 * A stand-in for the Pulumi engine's Engine service that only takes log lines (the Pulumi CLI cannot run
 * on these machines): where the native plugin's warnings go when it knows the engine's address.
 */
import * as grpc from "@grpc/grpc-js";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import * as engrpc from "@pulumi/pulumi/proto/engine_grpc_pb";
import type * as engproto from "@pulumi/pulumi/proto/engine_pb";

export interface LogLine {
  severity: number;
  message: string;
  urn: string;
}

/** An Engine service that only takes log lines, resolving `next` with each one. */
export async function fakeEngine(): Promise<{
  address: string;
  next(): Promise<LogLine>;
  /** Lines received that `next` has not given yet. */
  unread: readonly LogLine[];
  close(): void;
}> {
  const waiting: ((line: LogLine) => void)[] = [];
  const lines: LogLine[] = [];
  const server = new grpc.Server();
  server.addService(engrpc.EngineService, {
    log: (call: grpc.ServerUnaryCall<engproto.LogRequest, Empty>, callback: grpc.sendUnaryData<Empty>) => {
      const line = {
        severity: call.request.getSeverity(),
        message: call.request.getMessage(),
        urn: call.request.getUrn(),
      };
      const waiter = waiting.shift();
      if (waiter) waiter(line);
      else lines.push(line);
      callback(null, new Empty());
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    unread: lines,
    next: () =>
      new Promise((resolve) => (lines.length > 0 ? resolve(lines.shift()!) : waiting.push(resolve))),
    close: () => server.forceShutdown(),
  };
}
