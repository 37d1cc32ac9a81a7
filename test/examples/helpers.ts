/** Runs an example program under the engine against a fresh emulator whose clock runs fast. */
import * as fs from "node:fs";
import * as path from "node:path";
import { startEmulator, type RunningEmulator } from "pulumi-gpucloud/emulator";
import { GpuCloudClient } from "pulumi-gpucloud/sdk";
import { assertBuilt, BUILD_STAMP, ensurePackageLink, REPO_ROOT } from "../../dev/self-link";
import {
  secret,
  Stack,
  type FrontDoorFactory,
  type Op,
  type OperationResult,
  type PolicyPackOptions,
  type Props,
} from "../../testing";

export const API_KEY = "demo-key";

export interface ExampleRun {
  stack: Stack;
  /** The stack config it was opened with: the provider's settings and the example's own. */
  config: Props;
  emulator: RunningEmulator;
  api: GpuCloudClient;
  close(): Promise<void>;
}

/** The compiled example (`npm run build`), refusing one older than its source. */
export function compiledExample(name: string): string {
  const source = path.join(REPO_ROOT, "examples", name, "index.ts");
  const compiled = path.join(REPO_ROOT, "dist", "examples", name, "index.js");
  // The build is incremental: its stamp, not the compiled file's time, says when it last ran.
  const stamp = path.join(REPO_ROOT, BUILD_STAMP);
  if (
    !fs.existsSync(compiled) ||
    !fs.existsSync(stamp) ||
    fs.statSync(stamp).mtimeMs < fs.statSync(source).mtimeMs
  ) {
    throw new Error(`${compiled} is missing or older than ${source}: run \`npm run build\` first.`);
  }
  return compiled;
}

/** `env` without the provider's settings (GPUCLOUD_*), which users may set instead of stack config. */
function withoutSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith("GPUCLOUD_")));
}

/**
 * The example against a fresh emulator whose clock runs 60x (an instance starts in one real second); the
 * provider polls every 20 ms. `frontDoor` and `policyPacks` as Stack.open takes them. With `settingsFrom: "environment"` the provider's settings come from
 * GPUCLOUD_* variables of Stack.open's `env` instead of stack config, as users of the CLI may set them.
 */
export async function openExample(
  name: string,
  config: Props,
  options: {
    settingsFrom?: "config" | "environment";
    frontDoor?: FrontDoorFactory;
    policyPacks?: PolicyPackOptions[];
  } = {},
): Promise<ExampleRun> {
  assertBuilt();
  ensurePackageLink();
  const emulator = await startEmulator({ port: 0, timeScale: 60, apiKeys: [API_KEY] });
  const api = new GpuCloudClient({ baseUrl: emulator.url, apiKey: API_KEY });
  const settings = { baseUrl: emulator.url, apiKey: API_KEY, pollIntervalMs: "20" };
  const fromEnvironment = options.settingsFrom === "environment";
  // This process's environment stays as it is: Stack.open's `env` reaches the provider process and the
  // program's data sources alike, as one environment does under the CLI.
  const env = fromEnvironment
    ? {
        ...withoutSettings(process.env),
        GPUCLOUD_BASE_URL: settings.baseUrl,
        GPUCLOUD_API_KEY: settings.apiKey,
        GPUCLOUD_POLL_INTERVAL_MS: settings.pollIntervalMs,
      }
    : undefined;
  const stackConfig = {
    ...(fromEnvironment
      ? {}
      : {
          "gpucloud:baseUrl": settings.baseUrl,
          "gpucloud:apiKey": secret(settings.apiKey),
          "gpucloud:pollIntervalMs": settings.pollIntervalMs,
        }),
    ...config,
  };
  const stack = await Stack.open({
    program: compiledExample(name),
    project: `gpucloud-${name}`,
    stack: "test",
    config: stackConfig,
    frontDoor: options.frontDoor,
    policyPacks: options.policyPacks,
    env,
  });
  return {
    stack,
    config: stackConfig,
    emulator,
    api,
    async close() {
      await stack.close();
      await api.close();
      await emulator.close();
    },
  };
}

/** `{ name: op }` for every step, for one readable assertion per operation. */
export function plan(result: OperationResult): Record<string, Op> {
  return Object.fromEntries(result.steps.map((s) => [s.name, s.op]));
}
