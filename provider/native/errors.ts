/**
 * The plugin's own failures, and the details the engine reads off a status: for a resource that exists
 * but could not finish, ErrorResourceInitFailed packed into a google.rpc.Status in the
 * `grpc-status-details-bin` trailer (as @pulumi/pulumi's own provider server packs it), so the engine
 * keeps the resource's id and outputs in state. Every text passes through `redact`. Which code each
 * failure answers with is failure-codes.ts's.
 */
import * as grpc from "@grpc/grpc-js";
import { Any } from "google-protobuf/google/protobuf/any_pb";
import type { Struct } from "google-protobuf/google/protobuf/struct_pb";
import * as errorsproto from "@pulumi/pulumi/proto/errors_pb";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import * as statusproto from "@pulumi/pulumi/proto/status_pb";
import { redact } from "./redact";

export type RpcFailure = Partial<grpc.StatusObject> & { code: grpc.status; details: string };

/** A failure with its own status code; its message is the whole story for the user. */
export class RpcError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
  }
}

/** A component's inputs refused by its Construct: each input at fault with its rule. */
export class InputsRefusedError extends Error {
  constructor(
    message: string,
    readonly errors: readonly { propertyPath: string; reason: string }[],
  ) {
    super(message);
  }
}

/** The resource `id` exists with `properties`, but `reasons` kept it from finishing. */
export class InitFailedError extends Error {
  constructor(
    message: string,
    readonly id: string,
    readonly properties: Struct,
    readonly inputs: Struct,
    readonly reasons: string[],
  ) {
    super(message);
  }
}

export function initFailed(err: InitFailedError, code: grpc.status, hidden: readonly string[]): RpcFailure {
  const message = redact(err.message, hidden);
  const detail = new provproto.ErrorResourceInitFailed();
  detail.setId(err.id);
  detail.setProperties(err.properties);
  detail.setInputs(err.inputs);
  detail.setReasonsList(err.reasons.map((reason) => redact(reason, hidden)));
  return withDetail(code, message, detail, "pulumirpc.ErrorResourceInitFailed");
}

/** A component's inputs refused (its Construct): each input and its rule, as the engine prints them. */
export function inputsRefused(
  err: InputsRefusedError,
  code: grpc.status,
  hidden: readonly string[],
): RpcFailure {
  const detail = new errorsproto.InputPropertiesError();
  for (const { propertyPath, reason } of err.errors) {
    const refused = new errorsproto.InputPropertiesError.PropertyError();
    refused.setPropertyPath(propertyPath);
    refused.setReason(redact(reason, hidden));
    detail.addErrors(refused);
  }
  const message = redact(err.message, hidden);
  return withDetail(code, message, detail, "pulumirpc.InputPropertiesError");
}

/** The status with `detail` packed into a google.rpc.Status in the `grpc-status-details-bin` trailer. */
function withDetail(
  code: grpc.status,
  message: string,
  detail: { serializeBinary(): Uint8Array },
  typeName: string,
): RpcFailure {
  const packed = new Any();
  packed.pack(detail.serializeBinary(), typeName);
  const status = new statusproto.Status();
  status.setCode(code);
  status.setMessage(message);
  status.addDetails(packed);
  const metadata = new grpc.Metadata();
  metadata.add("grpc-status-details-bin", Buffer.from(status.serializeBinary()));
  return { code, details: message, metadata };
}
