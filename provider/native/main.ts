#!/usr/bin/env node
/**
 * `pulumi-resource-gpucloud`: the native plugin as the engine starts it. Its arguments are the engine's
 * logging flags (`--logtostderr`, `-v=N`, `--tracing ENDPOINT`) and the engine's address; it prints the
 * port it serves on alone as its first stdout line and runs until SIGTERM or SIGINT (a second signal
 * ends it at once).
 */
import { serveNativeProvider, type NativeProvider } from "./server";

/** Flags the engine puts before the address that take the next argument as their value. */
const FLAGS_WITH_VALUE = new Set(["--tracing"]);

/** The engine's address: the first argument that is neither a flag nor a flag's value. */
export function engineAddressFrom(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (FLAGS_WITH_VALUE.has(args[i])) i++;
    else if (!args[i].startsWith("-")) return args[i];
  }
  return undefined;
}

/**
 * Serves the plugin, prints its port as the first stdout line and closes it on SIGTERM or SIGINT: what
 * both the bin and the plugin folder's program run, with the arguments the engine passed.
 */
export async function runPlugin(args: readonly string[]): Promise<NativeProvider> {
  const provider = await serveNativeProvider({ engineAddress: engineAddressFrom(args) });
  process.stdout.write(`${provider.port}\n`);
  let closing = false;
  const stop = () => {
    if (closing) process.exit(1);
    closing = true;
    void provider.close().then(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  return provider;
}

if (require.main === module) {
  runPlugin(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`pulumi-resource-gpucloud could not start: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
