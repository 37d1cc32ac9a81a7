/** What every generated resource class (provider/generated/resources.ts) hands to pulumi.dynamic.Resource. */
import type * as pulumi from "@pulumi/pulumi";
import { RESOURCE_NAME_KEY } from "./framework/check";
import { PACKAGE, secretOutputNames, stateNames } from "./framework/define-resource";
import { definitionOf, type ResourceKind } from "./resources";
import { shimProvider } from "./shim";

export function resourceArguments(
  kind: ResourceKind,
  name: string,
  args: object,
  opts: pulumi.CustomResourceOptions | undefined,
): ConstructorParameters<typeof pulumi.dynamic.Resource> {
  const definition = definitionOf(kind);
  // Every state property is registered, unset ones as undefined, so the class's output fields resolve.
  // A dynamic provider's Check sees no URN: the name it autonames from comes with the inputs.
  const props = {
    ...Object.fromEntries(stateNames(definition).map((n) => [n, undefined])),
    ...args,
    ...(definition.autoname ? { [RESOURCE_NAME_KEY]: name } : {}),
  };
  const secrets = secretOutputNames(definition);
  const options =
    secrets.length === 0
      ? opts
      : { ...opts, additionalSecretOutputs: [...(opts?.additionalSecretOutputs ?? []), ...secrets] };
  return [shimProvider(kind), name, props, options, PACKAGE, kind];
}
