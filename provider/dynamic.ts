/**
 * The dynamic providers, one per resource: what the serialized shim requires at call time
 * (`pulumi-gpucloud/dynamic`), and what each `pulumi-gpucloud/dynamic/<kind>` module exports. Everything
 * that must live across calls in the provider process (config, the client and its connection pool)
 * lives in the modules behind it, never in the serialized text.
 */
import { dynamicProvider, type DynamicProvider } from "./framework/dynamic-provider";
import { RESOURCES, type ResourceKind } from "./resources";

export const providers = Object.fromEntries(RESOURCES.map((d) => [d.name, dynamicProvider(d)])) as Record<
  ResourceKind,
  DynamicProvider
>;
