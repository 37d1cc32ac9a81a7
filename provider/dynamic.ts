/**
 * The dynamic providers, one per resource: what the serialized shim requires at call time
 * (`pulumi-gpucloud/dynamic`), and what each `pulumi-gpucloud/dynamic/<kind>` module exports. Everything
 * that must live across calls in the provider process (config, the client and its connection pool)
 * lives in the modules behind it, never in the serialized text.
 */
import type * as pulumi from "@pulumi/pulumi";
import { dynamicProvider } from "./framework/dynamic-provider";
import { RESOURCES } from "./resources";

/**
 * Keyed by resource kind. Typed by plain strings on purpose: the definitions' own types hold zod's, and
 * this module's declarations are public (a user's project compiles them without skipLibCheck).
 */
export const providers: Readonly<Record<string, Required<pulumi.dynamic.ResourceProvider>>> =
  Object.fromEntries(RESOURCES.map((d) => [d.name, dynamicProvider(d)]));
