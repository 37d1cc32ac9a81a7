#!/usr/bin/env node
/**
 * `pulumi-resource-gpucloud`: the native plugin as the engine starts it. Its arguments are the engine's
 * logging flags (`--logtostderr`, `-v=N`, `--tracing ENDPOINT`) and the engine's address; it prints the
 * port it serves on alone as its first stdout line and runs until SIGTERM or SIGINT (a second signal
 * ends it at once).
 */
import { packageRoot, packageVersion } from "../package-root";
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

const USAGE = `Usage: pulumi-resource-gpucloud [ENGINE_ADDRESS]

The gpucloud resource provider plugin. Pulumi starts it: it serves Pulumi's gRPC ResourceProvider
protocol on 127.0.0.1, prints its port alone as its first line, and runs until SIGTERM or SIGINT.
Settings come from the stack config (gpucloud:apiKey, gpucloud:baseUrl, gpucloud:pollIntervalMs,
gpucloud:requestTimeoutMs, gpucloud:sharedAccount) or the environment (GPUCLOUD_API_KEY,
GPUCLOUD_BASE_URL, ...).

  --version   print the plugin's version and exit
  --help, -h  print this and exit
`;

/** What a person typing the bin's name asks for; the engine never passes these. */
function answersPerson(args: readonly string[]): string | undefined {
  if (args.includes("--help") || args.includes("-h")) return USAGE;
  if (args.includes("--version")) return `${packageVersion(packageRoot())}\n`;
  return undefined;
}

if (require.main === module) {
  const answer = answersPerson(process.argv.slice(2));
  if (answer !== undefined) {
    process.stdout.write(answer);
    process.exit(0);
  }
  runPlugin(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`pulumi-resource-gpucloud could not start: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
