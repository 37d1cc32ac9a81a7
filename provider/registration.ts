/** What every generated resource class (provider/generated/resources.ts) hands to pulumi.dynamic.Resource. */
import type * as pulumi from "@pulumi/pulumi";
import { RESOURCE_NAME_KEY } from "./framework/check";
import { secretOutputNames, stateNames, type AnyResourceDefinition } from "./framework/define-resource";
import { definitionOf, type ResourceKind } from "./resources";
import { shimProvider } from "./shim";
import { PACKAGE } from "./tokens";

export function resourceArguments(
  kind: ResourceKind,
  name: string,
  args: object,
  opts: pulumi.CustomResourceOptions | undefined,
): ConstructorParameters<typeof pulumi.dynamic.Resource> {
  const definition = definitionOf(kind);
  // A dynamic provider's Check sees no URN: the name it autonames from comes with the inputs.
  const props = {
    ...registeredProperties(definition, args),
    ...(definition.autoname ? { [RESOURCE_NAME_KEY]: name } : {}),
  };
  return [shimProvider(kind), name, props, withSecretOutputs(definition, opts), PACKAGE, kind];
}

/** Every state property is registered, unset ones as undefined, so the resource's output fields resolve. */
export function registeredProperties(
  definition: AnyResourceDefinition,
  args: object,
): Record<string, unknown> {
  return { ...Object.fromEntries(stateNames(definition).map((n) => [n, undefined])), ...args };
}

/** The options with the definition's secret outputs asked for: a provider cannot return secrets itself. */
export function withSecretOutputs<O extends pulumi.CustomResourceOptions>(
  definition: AnyResourceDefinition,
  opts: O | undefined,
): O | undefined {
  const secrets = secretOutputNames(definition);
  if (secrets.length === 0) return opts;
  return { ...opts, additionalSecretOutputs: [...(opts?.additionalSecretOutputs ?? []), ...secrets] } as O;
}
