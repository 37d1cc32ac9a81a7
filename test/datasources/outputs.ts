import * as pulumi from "@pulumi/pulumi";

/** What an Output carries besides its value; internal to @pulumi/pulumi but stable across 3.x. */
interface OutputInternals<T> {
  promise(): Promise<T>;
  isKnown: Promise<boolean>;
  isSecret: Promise<boolean>;
  allResources(): Promise<unknown>;
}

/**
 * The value of an Output, for assertions; rejects when the Output failed. An Output derives several
 * promises from one result, and in a Pulumi program the runtime observes them all; here nothing
 * would, so a failure would surface as an unhandled rejection besides this one.
 */
export function resolveOutput<T>(output: pulumi.Output<T>): Promise<T> {
  const internals = output as unknown as OutputInternals<T>;
  for (const derived of [internals.isKnown, internals.isSecret, internals.allResources()]) {
    derived.catch(() => undefined);
  }
  return internals.promise();
}
