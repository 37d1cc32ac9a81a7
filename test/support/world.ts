/** A real emulator on loopback plus the gpucloud providers behind the lifecycle harness, wired to it. */
import type { Emulator, EmulatorOptions } from "pulumi-gpucloud/emulator";
import { GpuCloudClient } from "pulumi-gpucloud/sdk";
import type { Harness, Props } from "../harness";
import { DEMO_KEY, gpuUuid, pod, startTestEmulator, type TestEmulator } from "../emulator/helpers";
import { advancing } from "./clock";
import { gpucloudHarness, providerConfig, type Door, type ProviderServerOptions } from "./providers";

export interface World {
  /** The front door of `h`. */
  door: Door;
  emu: TestEmulator;
  /** The emulator object itself (it runs in this process): its fault table, its rooms. */
  emulator: Emulator;
  h: Harness;
  /** The same cloud, reached directly: out-of-band changes and assertions. */
  api: GpuCloudClient;
  /** Instance inputs for a 1 x 4090D ComfyUI instance. */
  spec: Props;
  podUuid: string;
  gpu4090: string;
  gpu5090: string;
  /** Runs `work` while the frozen clock moves, so the provider's waits end without sleeping. */
  advancing<T>(work: Promise<T>, secondsPerStep?: number): Promise<T>;
  /** The instances the API lists for the world's key. */
  instanceUuids(): Promise<string[]>;
  /** Every instance the emulator holds, of every user, from its own state (no API call, no fault). */
  cloudInstances(): string[];
  stop(): Promise<void>;
}

export interface WorldOptions {
  /** The front door of the world's provider (default: dynamic). */
  door?: Door;
  emulator?: EmulatorOptions;
  /** Other stored providers or another working directory for the provider server. */
  server?: Pick<ProviderServerOptions, "providers" | "cwd">;
  /** More stack config for the provider (e.g. `gpucloud:requestTimeoutMs`). */
  config?: Props;
  /** The key of the provider and of `api` (default DEMO_KEY); the emulator must know it. */
  key?: string;
}

export async function startWorld(options: WorldOptions = {}): Promise<World> {
  const emu = await startTestEmulator(options.emulator);
  const h = await gpucloudHarness({
    ...options.server,
    door: options.door,
    config: providerConfig(emu.url, options.key, options.config),
  }).catch(async (err: unknown) => {
    await emu.close();
    throw err;
  });
  const emulator = emu.running.emulator;
  const api = new GpuCloudClient({ baseUrl: emu.url, apiKey: options.key ?? DEMO_KEY });
  const podUuid = (await pod(emu, "ComfyUI")).uuid;
  const gpu4090 = await gpuUuid(emu, "4090D", options.key);
  const gpu5090 = await gpuUuid(emu, "5090", options.key);
  return {
    door: options.door ?? "dynamic",
    emu,
    emulator,
    h,
    api,
    podUuid,
    gpu4090,
    gpu5090,
    spec: { podUuid, gpuUuid: gpu4090, gpuNums: 1 },
    advancing: (work, secondsPerStep) => advancing(emu, work, secondsPerStep),
    async instanceUuids() {
      const uuids: string[] = [];
      for await (const i of api.instances.listAll()) uuids.push(i.instance_uuid);
      return uuids.sort();
    },
    cloudInstances: () => instancesIn(emulator),
    async stop() {
      await api.close();
      await h.stop();
      await emu.close();
    },
  };
}

/** Every instance the emulator holds, read from its instances room (the snapshot is the record list). */
function instancesIn(emulator: Emulator): string[] {
  return [...titlesIn(emulator).keys()].sort();
}

/** Every instance's title, from the emulator's own state (no API call, no fault). */
export function titlesIn(emulator: Emulator): Map<string, string> {
  const room = emulator.rooms.find((r) => r.name === "instances");
  const records = (room?.snapshot() ?? []) as { instance_uuid: string; title?: string }[];
  return new Map(records.map((i) => [i.instance_uuid, i.title ?? ""]));
}
