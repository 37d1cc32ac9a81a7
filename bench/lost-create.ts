/**
 * `npm run bench:lost-create`: what one lost create answer costs at the default settings (a request
 * timeout of 30 s, polls every 5 s), with a shared account and without (`gpucloud:sharedAccount false`),
 * when the cloud made the instance (its answer dropped after the commit) and when it made nothing (the
 * connection reset before any work); beside it, the same create with its answer. Each run creates one
 * instance through the provider in this process, on a fresh emulator whose clock runs 20 times fast (a
 * 60 s start-up takes 3 s): the recovery's waits run on the real clock, so these figures are what a person
 * waits. The progress the person reads meanwhile is kept with the second it arrived.
 *   node dist/bench/lost-create.js [--out bench/lost-create.json]
 * It takes about ten minutes, nearly all of it the waits it measures.
 */
import * as fs from "node:fs";
import { parseArgs } from "node:util";
import type * as pulumi from "@pulumi/pulumi";
import { providers } from "../provider/dynamic";
import { routeProgress } from "../provider/framework/context";
import { BENCH_KEY, BenchCloud } from "./cloud";

const TIME_SCALE = 20;
const CREATE = "/instance/create_by_pod";

type Loss = "none" | "dropped after the commit" | "reset before any work";

interface LostCreateRun {
  loss: Loss;
  sharedAccount: boolean;
  /** Real ms from the create's start until it returned. */
  createMs: number;
  createCalls: number;
  /** What the person running `pulumi up` read meanwhile: seconds since the start, and the message. */
  progress: { atSeconds: number; message: string }[];
}

export interface LostCreateResults {
  settings: { requestTimeoutMs: number; pollIntervalMs: number; timeScale: number };
  runs: LostCreateRun[];
}

const instance = providers.Instance;

async function run(loss: Loss, sharedAccount: boolean): Promise<LostCreateRun> {
  const cloud = await BenchCloud.start(0, TIME_SCALE);
  const config: Record<string, string> = {
    "gpucloud:apiKey": BENCH_KEY,
    "gpucloud:baseUrl": cloud.url,
    "gpucloud:sharedAccount": String(sharedAccount),
  };
  await instance.configure({
    config: { get: (key: string) => config[key] },
  } as pulumi.dynamic.ConfigureRequest);
  const progress: LostCreateRun["progress"] = [];
  const started = performance.now();
  routeProgress(
    () => (message) =>
      progress.push({ atSeconds: Math.round((performance.now() - started) / 100) / 10, message }),
  );
  try {
    if (loss !== "none") {
      const kind = loss === "reset before any work" ? "reset" : "drop_after_commit";
      cloud.emu.emulator.faults.add({ path: CREATE, kind, count: 1 });
    }
    const [spec] = cloud.specs(1);
    const { inputs, failures } = await instance.check({}, { ...spec, title: "lost-answer" });
    if (failures && failures.length > 0)
      throw new Error(`check refused the bench's input: ${failures[0].reason}`);
    await instance.create(inputs);
    const createMs = Math.round(performance.now() - started);
    const createCalls = (await cloud.counts()).byEndpoint[`POST ${CREATE}`] ?? 0;
    return { loss, sharedAccount, createMs, createCalls, progress };
  } finally {
    await cloud.close();
  }
}

export async function lostCreateBench(): Promise<LostCreateResults> {
  const runs: LostCreateRun[] = [await run("none", true)];
  for (const loss of ["dropped after the commit", "reset before any work"] as const) {
    for (const shared of [true, false]) runs.push(await run(loss, shared));
  }
  return { settings: { requestTimeoutMs: 30_000, pollIntervalMs: 5_000, timeScale: TIME_SCALE }, runs };
}

function report(results: LostCreateResults): string {
  const rows = results.runs.map(
    (r) =>
      `| ${r.loss} | ${r.loss === "none" ? "" : r.sharedAccount} | ${(r.createMs / 1000).toFixed(1)} s | ${r.createCalls} |`,
  );
  const said = results.runs
    .filter((r) => r.loss !== "none")
    .map(
      (r) =>
        `\n${r.loss}, sharedAccount ${r.sharedAccount}:\n` +
        r.progress.map((p) => `  ${p.atSeconds.toFixed(1).padStart(6)} s  ${p.message}`).join("\n"),
    );
  return [
    "| create answer | sharedAccount | create took | create calls |",
    "|---|---|---|---|",
    ...rows,
    ...said,
  ].join("\n");
}

if (require.main === module) {
  const { values } = parseArgs({ options: { out: { type: "string", default: "bench/lost-create.json" } } });
  void lostCreateBench().then(
    (results) => {
      fs.writeFileSync(values.out, `${JSON.stringify(results, null, 2)}\n`);
      process.stdout.write(`${report(results)}\n`);
    },
    (err: unknown) => {
      process.stderr.write(`bench:lost-create failed: ${(err as Error).stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
