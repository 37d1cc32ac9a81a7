import * as pulumi from "@pulumi/pulumi";

export interface RegisteredResource {
  type: string;
  name: string;
  inputs: Record<string, unknown>;
}

/** Resolves once the output has a value (so no resolution is left pending after a test ends). */
export function settle<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply((v) => resolve(v)));
}

/**
 * Runs `construct` under `pulumi.runtime.setMocks` and returns what the engine would have received for each
 * registered resource: its type token and inputs, `__provider` included as the serialized provider text
 * (docs/design/pulumi-machinery.md#the-stored-provider). Every resource's urn and id are awaited before
 * returning.
 */
export async function registrations(construct: () => pulumi.CustomResource[]): Promise<RegisteredResource[]> {
  const seen: RegisteredResource[] = [];
  await pulumi.runtime.setMocks(
    {
      newResource(args) {
        seen.push({ type: args.type, name: args.name, inputs: args.inputs });
        return { id: `${args.name}-id`, state: args.inputs };
      },
      call(args) {
        return args.inputs;
      },
    },
    "project",
    "stack",
    false,
  );
  const resources = construct();
  await Promise.all(resources.flatMap((r) => [settle(r.urn), settle(r.id)]));
  return seen;
}

/** The serialized provider a dynamic resource stores in state, as the engine would receive it. */
export async function serializedProvider(construct: () => pulumi.CustomResource): Promise<string> {
  const [registered] = await registrations(() => [construct()]);
  const text = registered?.inputs["__provider"];
  if (typeof text !== "string") throw new Error(`${registered?.type} registered no __provider string`);
  return text;
}
