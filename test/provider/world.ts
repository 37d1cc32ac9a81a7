/** A real emulator on loopback plus the gpucloud providers behind the lifecycle harness, wired to it. */
import { GpuCloudClient } from "pulumi-gpucloud/sdk";
import { secret, type Harness, type Props } from "../harness";
import { DEMO_KEY, gpuUuid, pod, startTestEmulator, type TestEmulator } from "../emulator/helpers";
import { gpucloudHarness, type GpucloudHarnessOptions } from "./harness";

export interface World {
  emu: TestEmulator;
  h: Harness;
  /** The same cloud, reached directly: out-of-band changes and assertions. */
  api: GpuCloudClient;
  /** Instance inputs for a 1 x 4090D ComfyUI instance. */
  spec: Props;
  podUuid: string;
  gpu4090: string;
  gpu5090: string;
  /** Runs `work` while a parallel task moves the frozen clock forward, so waits end without sleeping. */
  advancing<T>(work: Promise<T>, secondsPerStep?: number): Promise<T>;
  instanceUuids(): Promise<string[]>;
  stop(): Promise<void>;
}

/** Polls of the provider's waits: fast, since the simulated clock moves many seconds per real millisecond. */
const POLL_MS = "10";

/** `server` picks other stored providers or another working directory for the provider server. */
export async function startWorld(
  server: Pick<GpucloudHarnessOptions, "providers" | "cwd"> = {},
): Promise<World> {
  const emu = await startTestEmulator();
  const h = await gpucloudHarness({
    ...server,
    config: {
      "gpucloud:apiKey": secret(DEMO_KEY),
      "gpucloud:baseUrl": emu.url,
      "gpucloud:pollIntervalMs": POLL_MS,
    },
  });
  const api = new GpuCloudClient({ baseUrl: emu.url, apiKey: DEMO_KEY });
  const podUuid = (await pod(emu, "ComfyUI")).uuid;
  const gpu4090 = await gpuUuid(emu, "4090D");
  const gpu5090 = await gpuUuid(emu, "5090");
  return {
    emu,
    h,
    api,
    podUuid,
    gpu4090,
    gpu5090,
    spec: { podUuid, gpuUuid: gpu4090, gpuNums: 1 },
    async advancing(work, secondsPerStep = 10) {
      let done = false;
      const settled = work.finally(() => (done = true));
      const ticker = (async () => {
        while (!done) {
          await emu.advance(secondsPerStep);
          await new Promise((resolve) => setTimeout(resolve, 15));
        }
      })();
      try {
        return await settled;
      } finally {
        await ticker;
      }
    },
    async instanceUuids() {
      const uuids: string[] = [];
      for await (const i of api.instances.listAll()) uuids.push(i.instance_uuid);
      return uuids.sort();
    },
    async stop() {
      await api.close();
      await h.stop();
      await emu.close();
    },
  };
}
