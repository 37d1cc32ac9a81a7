/**
 * What the engine reads off a failed Create or Update: ErrorResourceInitFailed, packed by the
 * dynamic-provider server into the gRPC status details (`grpc-status-details-bin`). The harness keeps
 * the gRPC error as the cause of the error it throws.
 */
import type * as grpc from "@grpc/grpc-js";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import * as statusproto from "@pulumi/pulumi/proto/status_pb";

export interface InitFailure {
  message: string;
  id: string;
  properties: Record<string, unknown>;
  reasons: string[];
}

/** The ErrorResourceInitFailed packed into a gRPC error's status details, with the status message. */
export function resourceInitFailed(
  err: grpc.ServiceError | undefined,
): { message: string; failed: provproto.ErrorResourceInitFailed } | undefined {
  const [bin] = (err?.metadata?.get("grpc-status-details-bin") ?? []) as Buffer[];
  if (!bin) return undefined;
  const status = statusproto.Status.deserializeBinary(new Uint8Array(bin));
  const detail = status
    .getDetailsList()
    .find((d) => d.getTypeUrl().endsWith("pulumirpc.ErrorResourceInitFailed"));
  if (!detail) return undefined;
  const failed = provproto.ErrorResourceInitFailed.deserializeBinary(detail.getValue_asU8());
  return { message: status.getMessage(), failed };
}

/** The ErrorResourceInitFailed an operation failed with; undefined when it failed without one. */
export function initFailure(err: unknown): InitFailure | undefined {
  const found = resourceInitFailed((err as Error | undefined)?.cause as grpc.ServiceError | undefined);
  if (!found) return undefined;
  const { message, failed } = found;
  return {
    message,
    id: failed.getId(),
    properties: (failed.getProperties()?.toJavaScript() ?? {}) as Record<string, unknown>,
    reasons: failed.getReasonsList(),
  };
}
