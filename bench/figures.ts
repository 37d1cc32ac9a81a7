/**
 * The summary figures: the provider's size in state, check() speed, the emulator's own throughput, and
 * how much parallel creates gain when each create call takes as long as the live service's.
 */
import * as pulumi from "@pulumi/pulumi";
import { Agent, request } from "undici";
import { installPackedCopy } from "../dev/installed";
import { providers } from "../provider/dynamic";
import { shimProvider } from "../provider/shim";
import { BENCH_KEY, BenchCloud, type Pace } from "./cloud";
import { startSubject } from "./subjects";

export interface SerializedProviderFigure {
  /** The `__provider` text of one Instance, with the package installed from its tarball (the users' case). */
  bytesPerCopy: number;
  /**
   * dynamic.Resource stores it twice per resource: as an input and as an output
   * (docs/design/pulumi-machinery.md#the-stored-provider).
   */
  bytesPerResource: number;
  /** The same with the package reached through a symlink (this repository, npm link): the function shim. */
  linkedBytesPerCopy: number;
}

export interface EmulatorThroughput {
  concurrency: number;
  /** GET /instance/info answered per second. */
  infoPerSecond: number;
  /** GET /instance/list pages of 100 instances answered per second. */
  listPagesPerSecond: number;
}

/** What dynamic.Resource stores: serializeFunction(() => provider), as @pulumi/pulumi's dynamic module does. */
export async function serializedProvider(): Promise<SerializedProviderFigure> {
  const project = await installPackedCopy();
  try {
    const bytesPerCopy = Buffer.byteLength((await project.storedProviders()).Instance);
    // This process loads the package from the repository (no node_modules in the path): the function shim.
    const provider = shimProvider("Instance");
    const linked = await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true });
    return {
      bytesPerCopy,
      bytesPerResource: 2 * bytesPerCopy,
      linkedBytesPerCopy: Buffer.byteLength(linked.text),
    };
  } finally {
    await project.remove();
  }
}

/** Milliseconds for check() of `count` different, valid Instance inputs, one after another. */
export async function checkMs(count: number): Promise<number> {
  const inputs = Array.from({ length: count }, (_, i) => ({
    podUuid: `pod-${i % 7}`,
    gpuUuid: `gpu-${i % 3}`,
    gpuNums: [1, 2, 4, 8][i % 4],
    title: `fleet-${i}`,
    running: i % 5 !== 0,
    waitTimeoutSeconds: 600 + i,
  }));
  const started = performance.now();
  for (const news of inputs) {
    const { failures } = await providers.Instance.check({}, news);
    if (failures && failures.length > 0)
      throw new Error(`check refused a valid input: ${failures[0].reason}`);
  }
  return Math.round((performance.now() - started) * 10) / 10;
}

/** Requests per second the emulator answers on its own, so the scenario figures can be read against it. */
export async function emulatorThroughput(seconds: number, concurrency = 16): Promise<EmulatorThroughput> {
  const cloud = await BenchCloud.start(0, 0);
  const agent = new Agent({ connections: concurrency });
  try {
    const [first] = cloud.seedRunning(cloud.specs(100));
    const headers = { authorization: `Bearer ${BENCH_KEY}` };
    const rate = async (path: string): Promise<number> => {
      let answered = 0;
      const until = performance.now() + seconds * 1000;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (performance.now() < until) {
            const res = await request(`${cloud.emu.apiBase}${path}`, { dispatcher: agent, headers });
            await res.body.text();
            answered++;
          }
        }),
      );
      return Math.round(answered / ((performance.now() - started) / 1000));
    };
    return {
      concurrency,
      infoPerSecond: await rate(`/instance/info?instance_uuid=${first}`),
      listPagesPerSecond: await rate("/instance/list?page=1&page_size=100"),
    };
  } finally {
    await agent.close();
    await cloud.close();
  }
}

export interface ParallelCreateFigure {
  n: number;
  /** Real ms the emulator holds every create call (--latency /instance/create_by_pod=MS). */
  createLatencyMs: number;
  parallelism: number;
  /** Create and wait of n through the provider, `parallelism` at a time. */
  parallelMs: number;
  /** The same, one at a time. */
  serialMs: number;
  /**
   * What no create path can beat as the engine runs it: a Create holds its parallelism slot through its
   * wait, so ceil(n / parallelism) rounds of one create call and one boot.
   */
  floorMs: number;
}

/** The emulator's boot of an instance, in simulated seconds (emulator/instances/store.ts, durations.boot). */
const BOOT_SECONDS = 60;
const CREATE_LATENCY_MS = 1000;

/**
 * Create and wait of `n` instances through the provider, `parallelism` at a time and then one at a time,
 * each on a fresh emulator whose create call takes a second, the live service's create latency as
 * the benchmark models it (bench/README.md).
 */
export async function parallelCreate(
  n: number,
  parallelism: number,
  pace: Pace,
): Promise<ParallelCreateFigure> {
  const timed = async (lanes: number): Promise<number> => {
    const cloud = await BenchCloud.start(0, pace.timeScale, { "/instance/create_by_pod": CREATE_LATENCY_MS });
    const subject = await startSubject("gpucloud", cloud.url, pace.pollIntervalMs);
    try {
      const specs = cloud.specs(n);
      const started = performance.now();
      await Promise.all(
        Array.from({ length: lanes }, async (_, lane) => {
          for (let i = lane; i < specs.length; i += lanes) await subject.create([specs[i]]);
        }),
      );
      return Math.round(performance.now() - started);
    } finally {
      await subject.close();
      await cloud.close();
    }
  };
  return {
    n,
    createLatencyMs: CREATE_LATENCY_MS,
    parallelism,
    parallelMs: await timed(parallelism),
    serialMs: await timed(1),
    floorMs: Math.ceil(n / parallelism) * (CREATE_LATENCY_MS + (BOOT_SECONDS / pace.timeScale) * 1000),
  };
}
