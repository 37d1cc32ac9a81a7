/**
 * A real emulator and the native plugin's process, wired to it the way a stack's config would wire them:
 * CheckConfig and Configure with the key as a secret and the settings as stack config text.
 */
import { GpuCloudClient } from "pulumi-gpucloud/sdk";
import {
  callsByEndpoint,
  DEMO_KEY,
  gpuUuid,
  pod,
  startTestEmulator,
  type TestEmulator,
} from "../emulator/helpers";
import { advancing } from "../support/clock";
import { BIN, PluginProcess, secret, type Props } from "./plugin";

/** A key no other string of a test run contains, so finding it anywhere is a leak. */
export const API_KEY = "native-plugin-key-7c1e9b2d";

export interface NativeCloud {
  emu: TestEmulator;
  plugin: PluginProcess;
  api: GpuCloudClient;
  /** The provider inputs a stack would hold (`gpucloud:*` config by short name, the key secret). */
  config: Props;
  /** Instance inputs for a 1 x 4090D ComfyUI instance. */
  spec: Props;
  podUuid: string;
  gpu4090: string;
  gpu5090: string;
  advancing<T>(work: Promise<T>, secondsPerStep?: number): Promise<T>;
  /** API calls the cloud received so far, per endpoint ("POST /instance/create_by_pod"). */
  calls(): Promise<Record<string, number>>;
  instanceUuids(): Promise<string[]>;
  stop(): Promise<void>;
}

/**
 * `engineAddress`: what the plugin is started with (default: an address nothing listens on);
 * `startedByHand`: started with no argument, as a person starts it for PULUMI_DEBUG_PROVIDERS.
 */
export async function startNativeCloud(
  options: { engineAddress?: string; startedByHand?: boolean } = {},
): Promise<NativeCloud> {
  // DEMO_KEY too: the seed lookups of the test helpers use it on public endpoints.
  const emu = await startTestEmulator({ apiKeys: [DEMO_KEY, API_KEY] });
  const engineArgs = options.startedByHand ? [] : [options.engineAddress ?? "127.0.0.1:1"];
  const plugin = await PluginProcess.start({ command: [process.execPath, BIN, ...engineArgs] });
  const config = { apiKey: secret(API_KEY), baseUrl: emu.url, pollIntervalMs: "10" };
  const api = new GpuCloudClient({ baseUrl: emu.url, apiKey: API_KEY });
  const podUuid = (await pod(emu, "ComfyUI")).uuid;
  const gpu4090 = await gpuUuid(emu, "4090D", API_KEY);
  const gpu5090 = await gpuUuid(emu, "5090", API_KEY);
  return {
    emu,
    plugin,
    api,
    config,
    spec: { podUuid, gpuUuid: gpu4090, gpuNums: 1 },
    podUuid,
    gpu4090,
    gpu5090,
    advancing: (work, secondsPerStep) => advancing(emu, work, secondsPerStep),
    calls: () => callsByEndpoint(emu),
    async instanceUuids() {
      const uuids: string[] = [];
      for await (const i of api.instances.listAll()) uuids.push(i.instance_uuid);
      return uuids.sort();
    },
    async stop() {
      await api.close();
      await plugin.stop();
      await emu.close();
    },
  };
}
