/**
 * The cost guard's tests' cloud: a real emulator with a frozen clock, the stack config a policy pack reads
 * (under the CLI, from PULUMI_CONFIG) pointing at it, and a new policy run before each test on a cloud back
 * at its seed, so each test reads the cloud afresh and counts from zero.
 */
import * as pulumi from "@pulumi/pulumi";
import { startEmulator, type RunningEmulator } from "pulumi-gpucloud/emulator";
import { GpuCloudClient } from "pulumi-gpucloud/sdk";
import { clearCatalogueCache } from "../../provider/datasources/catalogue-cache";
import { startNewRun } from "../../provider/policy/run";
import { advance, requests } from "../support/data-source-cloud";
import { GPU_4090D, POD_COMFYUI } from "./stack-view";

export const KEY = "policy-key";
/** Another user's key: what it saves, the stack's key cannot see. */
export const OTHER_KEY = "other-policy-key";

export interface GuardCloud {
  readonly emulator: RunningEmulator;
  /** The stack's config: the emulator and KEY unless `config` is given. */
  stackConfig(config?: Record<string, string>): void;
  /** How many times the run called `endpoint` (relative to the API base) since the test began. */
  calls(endpoint: string): Promise<number>;
  /** An instance made out of band with `key`, titled `title`, on ComfyUI. */
  instance(title: string, spec?: { gpuUuid?: string; gpuNums?: number }, key?: string): Promise<string>;
  /** A personal image saved with `key` from a new ComfyUI instance: its uuid. */
  personalImage(key?: string): Promise<string>;
}

export function useGuardCloud(): GuardCloud {
  let emulator: RunningEmulator | undefined;
  const running = () => {
    if (!emulator) throw new Error("the guard cloud is used before its beforeAll hook ran");
    return emulator;
  };
  const client = (key: string) => new GpuCloudClient({ baseUrl: running().url, apiKey: key });
  const withClient = async <T>(key: string, use: (c: GpuCloudClient) => Promise<T>): Promise<T> => {
    const c = client(key);
    try {
      return await use(c);
    } finally {
      await c.close();
    }
  };
  const cloud: GuardCloud = {
    get emulator() {
      return running();
    },
    stackConfig(config = { "gpucloud:baseUrl": running().url, "gpucloud:apiKey": KEY }) {
      pulumi.runtime.setAllConfig(config, ["gpucloud:apiKey"]);
    },
    calls: async (endpoint) => (await requests(running(), endpoint)).length,
    instance: (title, spec = {}, key = KEY) =>
      withClient(key, async (c) => {
        const made = await c.instances.createByPod({
          pod_uuid: POD_COMFYUI,
          gpu_uuid: spec.gpuUuid ?? GPU_4090D,
          gpu_nums: spec.gpuNums ?? 1,
        });
        await c.instances.updateTitle(made.instance_uuid, title);
        return made.instance_uuid;
      }),
    personalImage: (key = KEY) =>
      withClient(key, async (c) => {
        const made = await c.instances.createByPod({
          pod_uuid: POD_COMFYUI,
          gpu_uuid: GPU_4090D,
          gpu_nums: 1,
        });
        await advance(running(), 60);
        const before = new Set((await c.images.list()).image_list.map((i) => i.uuid));
        await c.instances.saveImage(made.instance_uuid);
        await advance(running(), 120);
        return (await c.images.list()).image_list.find((i) => !before.has(i.uuid))!.uuid;
      }),
  };
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, timeScale: 0, apiKeys: [KEY, OTHER_KEY] });
  });
  afterAll(() => emulator?.close());
  beforeEach(async () => {
    await fetch(`${running().url}/_emulator/reset`, { method: "POST" });
    await fetch(`${running().url}/_emulator/requests`, { method: "DELETE" });
    cloud.stackConfig();
    // A policy pack's process is one run: its reads, the data sources' catalogue cache included, start empty.
    clearCatalogueCache();
    startNewRun();
  });
  return cloud;
}
