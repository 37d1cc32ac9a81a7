/**
 * The two ways a component's children are made. In a TypeScript program they are the package's dynamic
 * resources (the classes a program constructs itself); in the native plugin's Construct they are the
 * plugin's own resources, `gpucloud:index:<Name>`, registered with the engine's resource monitor as any
 * other language's program registers them.
 */
import * as pulumi from "@pulumi/pulumi";
import { token } from "../tokens";
import type { ChildKit } from "../framework/define-component";
import { registeredProperties, resourceArguments, withSecretOutputs } from "../registration";
import { definitionOf, type ResourceKind } from "../resources";

type Child = ReturnType<ChildKit["resource"]>;

/** A resource of the package as a program declares it (the generated classes are these, typed). */
class DynamicChild extends pulumi.dynamic.Resource {}

/** A resource of the native plugin, as a program in any other language declares it. */
class PluginChild extends pulumi.CustomResource {}

export const programKit: ChildKit = {
  resource: (kind, name, args, opts) =>
    new DynamicChild(...resourceArguments(kind as ResourceKind, name, args, opts)) as Child,
};

export const pluginKit: ChildKit = {
  resource(kind, name, args, opts) {
    const definition = definitionOf(kind as ResourceKind);
    const props = registeredProperties(definition, args);
    return new PluginChild(token(kind), name, props, withSecretOutputs(definition, opts)) as Child;
  },
};
