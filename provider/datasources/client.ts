import * as pulumi from "@pulumi/pulumi";
import type { GpuCloudClient } from "../../sdk";
import { clientFor, configuredValue } from "../framework/context";
import { programEnvironment, trackProgramWork } from "../program-environment";
import { Connection, resolveConnection } from "../settings";
import { outputFailure } from "./errors";
import type { DataSourceOptions, InputArgs } from "./options";

const MAX_PAGE_SIZE = 100;

/** Opens a client for one data source call and always closes it, so no socket outlives the call. */
export async function withClient<T>(
  connection: Connection,
  use: (client: GpuCloudClient) => Promise<T>,
): Promise<T> {
  const client = clientFor(connection, programEnvironment());
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

/** `baseUrl` and `apiKey` in `opts` override the stack config and the environment (../settings.ts). */
export function connect(opts: DataSourceOptions | undefined, requireKey = true): Connection {
  // Every function takes pageSize; one whose list has no pages (the GPU catalogue) still refuses a bad one.
  paging(opts);
  // Read by fully qualified key (`gpucloud:apiKey`): in a program its stack config, in the native
  // plugin (whose Invoke runs these functions) the config the engine configured it with.
  const lookup = (key: string) => configuredValue(key) ?? pulumi.runtime.getConfig(key);
  return resolveConnection(lookup, opts ?? {}, requireKey, programEnvironment());
}

export function paging(opts: DataSourceOptions | undefined): { pageSize?: number } {
  const pageSize = opts?.pageSize;
  if (pageSize === undefined) {
    return {};
  }
  // The API caps page_size at 100 for the model-runs list and shows no other cap; the emulator
  // applies 100 everywhere, so a larger size is refused here rather than by the cloud
  // (docs/design/cloud-api.md#paging).
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
    throw new RangeError(`pageSize is ${pageSize}; it must be an integer from 1 to ${MAX_PAGE_SIZE}.`);
  }
  return { pageSize };
}

/** The `...Output` form of a Promise-form data source: waits for every input, then calls it. */
export function lift<A, R>(
  promiseForm: (args: A, opts?: DataSourceOptions) => Promise<R> | R,
  args: InputArgs<A>,
  opts?: DataSourceOptions,
): pulumi.Output<R> {
  return pulumi
    .output(args)
    .apply((resolved) => reportedOnce(() => promiseForm(resolved as A, opts))) as pulumi.Output<R>;
}

/** The `...Output` form of a data source that takes no arguments. */
export function liftCall<R>(call: () => Promise<R>): pulumi.Output<R> {
  return pulumi.output(reportedOnce(call)) as pulumi.Output<R>;
}

/** Runs a data source for its Output form: a failure surfaces once, with its own message. */
function reportedOnce<R>(call: () => Promise<R> | R): Promise<R> {
  return trackProgramWork(
    (async () => {
      try {
        return await call();
      } catch (err) {
        throw outputFailure(err);
      }
    })(),
  );
}
