/**
 * One emulator per measured run, in this process on a loopback port: a fast simulated clock so a 60 s
 * start-up takes 3 real seconds, instances seeded straight into its store (setup is not measured),
 * and the request log read over the admin API to count what the subject sent.
 */
import { request } from "undici";
import { startEmulator, userOfKeySpec, type RunningEmulator } from "../emulator";
import { CatalogueRoom } from "../emulator/catalogue/routes";
import { InstancesRoom } from "../emulator/instances/routes";

export const BENCH_KEY = "bench-key";
/** How fast simulated time runs and how often both subjects poll (real ms). */
export interface Pace {
  timeScale: number;
  pollIntervalMs: number;
}

/**
 * A start-up (60 s simulated) takes 3 s; polls every 5 simulated seconds, as live clients do
 * (docs/design/live-service-notes.md#instance-life).
 */
export const BENCH_PACE: Pace = { timeScale: 20, pollIntervalMs: 250 };
/** The smoke variant: a start-up takes 1 s, polls every 6 simulated seconds. */
export const SMOKE_PACE: Pace = { timeScale: 60, pollIntervalMs: 100 };

export interface InstanceSpec {
  podUuid: string;
  gpuUuid: string;
  gpuNums: number;
  title: string;
}

/** The emulator's request log keeps the last 50,000 requests (emulator/core/controls/requestlog.ts): counts that reach it are lower bounds. */
export const REQUEST_LOG_CAP = 50_000;

export interface Counts {
  /** Every request that reached the API, refused ones included. */
  apiCalls: number;
  http429: number;
  /** Requests per endpoint ("GET /instance/list"). */
  byEndpoint: Record<string, number>;
}

export class BenchCloud {
  private constructor(
    readonly emu: RunningEmulator,
    private readonly spec: Omit<InstanceSpec, "title">,
  ) {}

  /** `latency`: added real ms per API path, as the emulator's --latency takes it. */
  static async start(
    rateLimit: number,
    timeScale: number,
    latency?: Record<string, number>,
  ): Promise<BenchCloud> {
    const emu = await startEmulator({
      port: 0,
      apiKeys: [BENCH_KEY],
      balance: "100000000",
      timeScale,
      rateLimit,
      latency,
    });
    const catalogue = emu.emulator.rooms.find((r): r is CatalogueRoom => r instanceof CatalogueRoom);
    const pod = catalogue?.store.pods()[0];
    const gpu = catalogue?.store.gpus().find((g) => g.status === 1);
    if (!pod || !gpu) throw new Error("the emulator's seed catalogue has no pod or no valid GPU");
    return new BenchCloud(emu, { podUuid: pod.uuid, gpuUuid: gpu.gpu_uuid, gpuNums: 1 });
  }

  get url(): string {
    return this.emu.url;
  }

  /** What a program declaring `n` instances asks for. */
  specs(n: number): InstanceSpec[] {
    return Array.from({ length: n }, (_, i) => ({ ...this.spec, title: `fleet-${i}` }));
  }

  /** Creates running instances for `specs` without the API (not counted, not rate-limited); their uuids. */
  seedRunning(specs: InstanceSpec[]): string[] {
    const store = this.emu.emulator.rooms.find((r): r is InstancesRoom => r instanceof InstancesRoom)?.store;
    if (!store) throw new Error("the emulator has no instances room");
    const owner = userOfKeySpec(BENCH_KEY);
    const uuids = specs.map((s) => {
      const { instance_uuid } = store.createByPod(owner, {
        pod_uuid: s.podUuid,
        gpu_uuid: s.gpuUuid,
        gpu_nums: s.gpuNums,
      });
      store.updateTitle(owner, instance_uuid, s.title);
      return instance_uuid;
    });
    this.emu.advance(61);
    return uuids;
  }

  async clearLog(): Promise<void> {
    await this.admin("DELETE", "/requests");
  }

  async counts(): Promise<Counts> {
    const { requests } = (await this.admin("GET", "/requests")) as {
      requests: { method: string; path: string; status: number | null }[];
    };
    const byEndpoint: Record<string, number> = {};
    for (const r of requests) {
      const endpoint = `${r.method} ${r.path.split("?")[0]}`;
      byEndpoint[endpoint] = (byEndpoint[endpoint] ?? 0) + 1;
    }
    return {
      apiCalls: requests.length,
      http429: requests.filter((r) => r.status === 429).length,
      byEndpoint,
    };
  }

  close(): Promise<void> {
    return this.emu.close();
  }

  private async admin(method: "GET" | "DELETE", path: string): Promise<unknown> {
    const res = await request(`${this.emu.url}/_emulator${path}`, { method });
    return res.body.json();
  }
}
