/** Small helpers shared by the resources. */
import type * as pulumi from "@pulumi/pulumi";

/** A resource's args: every input may be a Pulumi Input. */
export type Inputs<T> = { [K in keyof T]: pulumi.Input<T[K]> };

/**
 * Outputs cross gRPC as a protobuf Struct: undefined, Date and BigInt break it (DESIGN §7).
 * A JSON round trip leaves plain data (absent fields are dropped).
 */
export function plainJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

const queues = new Map<string, Promise<unknown>>();

/** Runs `task` after every earlier task of the same key has settled (one at a time per key, per process). */
export function serialised<T>(key: string, task: () => Promise<T>): Promise<T> {
  const previous = queues.get(key) ?? Promise.resolve();
  const run = previous.then(task, task);
  const tail = run.catch(() => undefined);
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return run;
}

/** SSH passwords and the like: the engine marks these outputs secret (a provider cannot return pulumi.secret). */
export function withSecretOutputs(
  opts: pulumi.CustomResourceOptions | undefined,
  names: string[],
): pulumi.CustomResourceOptions {
  return { ...opts, additionalSecretOutputs: [...(opts?.additionalSecretOutputs ?? []), ...names] };
}
