/**
 * The implementation the serialized shim requires at call time (`pulumi-gpucloud/dynamic`). Everything that
 * must live across calls in the provider process (config, the client and its connection pool) lives in
 * the modules behind it, never in the serialized text.
 */
import type * as pulumi from "@pulumi/pulumi";
import { idleClosePolicyProvider } from "./idleClosePolicy";
import { instanceProvider } from "./instance";
import { personalImageProvider } from "./personalImage";
import type { ResourceKind } from "./shim";

export const providers: Record<ResourceKind, Required<pulumi.dynamic.ResourceProvider>> = {
  Instance: instanceProvider,
  IdleClosePolicy: idleClosePolicyProvider,
  PersonalImage: personalImageProvider,
};
