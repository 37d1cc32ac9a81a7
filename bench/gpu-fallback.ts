/**
 * `npm run bench:gpu-fallback`: the API calls a fallback between GPU models costs. N instances declare
 * 4090D, then 5090, then 4080 (`fallbackGpuUuids`), and are checked and created through the provider in
 * this process on a fresh emulator per case, while the emulator's stock leaves no card of the first
 * model, of the first two, or of none; then N stopped instances are started while their own model has no
 * card. Beside each case, the same work without fallbacks on a cloud with cards: the extra calls, per
 * endpoint and per instance. The target is one refused call per model tried and nothing else (the GPU
 * catalogue, which Check reads to check the list, is read once per provider process and is free).
 *   node dist/bench/gpu-fallback.js [--n 20] [--out bench/gpu-fallback.json]
 */
import * as fs from "node:fs";
import { parseArgs } from "node:util";
import type * as pulumi from "@pulumi/pulumi";
import { request } from "undici";
import { CatalogueRoom } from "../emulator/catalogue/routes";
import { providers } from "../provider/dynamic";
import { BENCH_KEY, BENCH_PACE, BenchCloud, type Counts } from "./cloud";

const MODELS = ["4090D", "5090", "4080"] as const;

type Work = "create" | "start";

interface Case {
  work: Work;
  /** Models with no free card. */
  empty: readonly string[];
  fallbacks: boolean;
}

interface CaseResult extends Case {
  n: number;
  counts: Counts;
  /** Calls beyond the same work without fallbacks on a cloud with cards, per instance and endpoint. */
  extraPerInstance: Record<string, number>;
}

export interface GpuFallbackResults {
  n: number;
  cases: CaseResult[];
}

const instance = providers.Instance;

async function setFree(cloud: BenchCloud, gpu: string, free: number | null): Promise<void> {
  const res = await request(`${cloud.url}/_emulator/gpus/${gpu}/stock`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ free }),
  });
  if (res.statusCode !== 200) throw new Error(`setting the stock of ${gpu} answered HTTP ${res.statusCode}`);
  await res.body.dump();
}

function uuidsOf(cloud: BenchCloud): string[] {
  const catalogue = cloud.emu.emulator.rooms.find((r): r is CatalogueRoom => r instanceof CatalogueRoom);
  return MODELS.map((name) => {
    const gpu = catalogue?.store.gpus().find((g) => g.gpu_name === name);
    if (!gpu) throw new Error(`the seed catalogue has no GPU model ${name}`);
    return gpu.gpu_uuid;
  });
}

async function checked(inputs: Record<string, unknown>): Promise<Record<string, unknown>> {
  const { inputs: news, failures } = await instance.check({}, inputs);
  if (failures && failures.length > 0)
    throw new Error(`check refused the bench's input: ${failures[0].reason}`);
  return news;
}

async function runCase(n: number, c: Case): Promise<Omit<CaseResult, "extraPerInstance">> {
  const cloud = await BenchCloud.start(0, BENCH_PACE.timeScale);
  const config: Record<string, string> = {
    "gpucloud:apiKey": BENCH_KEY,
    "gpucloud:baseUrl": cloud.url,
    "gpucloud:pollIntervalMs": String(BENCH_PACE.pollIntervalMs),
  };
  await instance.configure({
    config: { get: (key: string) => config[key] },
  } as pulumi.dynamic.ConfigureRequest);
  try {
    const [first, ...others] = uuidsOf(cloud);
    const specs = cloud.specs(n).map((spec) => ({
      ...spec,
      gpuUuid: first,
      ...(c.fallbacks ? { fallbackGpuUuids: others } : {}),
    }));
    const emptyNow = async () => {
      for (const name of c.empty) await setFree(cloud, name, 0);
    };
    if (c.work === "create") {
      await emptyNow();
      await cloud.clearLog();
      await Promise.all(specs.map(async (spec) => instance.create(await checked(spec))));
    } else {
      const stopped = await Promise.all(
        specs.map(async (spec) => {
          const inputs = await checked({ ...spec, running: false });
          return { inputs, made: await instance.create(inputs) };
        }),
      );
      await emptyNow();
      await cloud.clearLog();
      await Promise.all(
        stopped.map(async ({ inputs, made }) =>
          instance.update(made.id, made.outs, await checked({ ...inputs, running: true })),
        ),
      );
    }
    return { ...c, n, counts: await cloud.counts() };
  } finally {
    await cloud.close();
  }
}

function extra(run: Counts, baseline: Counts, n: number): Record<string, number> {
  const endpoints = new Set([...Object.keys(run.byEndpoint), ...Object.keys(baseline.byEndpoint)]);
  const out: Record<string, number> = {};
  for (const endpoint of endpoints) {
    const more = (run.byEndpoint[endpoint] ?? 0) - (baseline.byEndpoint[endpoint] ?? 0);
    if (more !== 0) out[endpoint] = Math.round((more / n) * 100) / 100;
  }
  return out;
}

export async function gpuFallbackBench(n: number): Promise<GpuFallbackResults> {
  const cases: CaseResult[] = [];
  for (const work of ["create", "start"] as const) {
    const baseline = await runCase(n, { work, empty: [], fallbacks: false });
    cases.push({ ...baseline, extraPerInstance: {} });
    const plans: Case[] =
      work === "create"
        ? [
            { work, empty: [], fallbacks: true },
            { work, empty: ["4090D"], fallbacks: true },
            { work, empty: ["4090D", "5090"], fallbacks: true },
          ]
        : [{ work, empty: ["4090D"], fallbacks: true }];
    for (const plan of plans) {
      const run = await runCase(n, plan);
      cases.push({ ...run, extraPerInstance: extra(run.counts, baseline.counts, n) });
    }
  }
  return { n, cases };
}

function report(results: GpuFallbackResults): string {
  const rows = results.cases.map(
    (c) =>
      `| ${c.work} | ${c.fallbacks ? "yes" : "no"} | ${c.empty.join(", ") || "none"} | ${c.counts.apiCalls} | ` +
      `${Object.entries(c.extraPerInstance)
        .map(([endpoint, more]) => `${endpoint} ${more > 0 ? "+" : ""}${more}`)
        .join(", ")} |`,
  );
  return [
    `${results.n} instances per case`,
    "| work | fallbacks | models with no card | API calls | extra per instance |",
    "|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      n: { type: "string", default: "20" },
      out: { type: "string", default: "bench/gpu-fallback.json" },
    },
  });
  void gpuFallbackBench(Number(values.n)).then(
    (results) => {
      fs.writeFileSync(values.out, `${JSON.stringify(results, null, 2)}\n`);
      process.stdout.write(`${report(results)}\n`);
    },
    (err: unknown) => {
      process.stderr.write(`bench:gpu-fallback failed: ${(err as Error).stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
