/**
 * `npm run bench`: every scenario at every N and rate limit, for this provider and for the naive
 * baseline, side by side in this process; then the fleet program's lifecycle through the engine's path
 * with either front door (bench/engine.ts); a table on stdout and bench/results.json.
 *   node dist/bench/run.js [--n 10,100,500] [--rate-limit 0,10] [--scenarios create,refresh,preview,destroy]
 *                          [--engine-n 100,500] [--doors dynamic,native] [--fleet-n 500] [--fleet-rounds 3]
 *                          [--smoke] [--full] [--out bench/results.json]
 * --smoke is the quick variant CI runs: N=10, both rate-limit settings, the engine's path at N=2, short figures.
 * Without --full, create and destroy of 500 under a rate limit are left out: at 10 requests per second
 * their 1,000 and 500 unavoidable writes alone take minutes for either subject.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { BENCH_PACE, SMOKE_PACE, type Pace } from "./cloud";
import { DOORS, ENGINE_VIA, engineRun, type DoorName, type EngineRecord, type EngineRun } from "./engine";
import { checkMs, emulatorThroughput, parallelCreate, serializedProvider } from "./figures";
import { fleetComparison, fleetTable, fleetTargets, type FleetComparison } from "./fleet-component";
import { engineTable, summaryText, table, targets, type Summary, type TargetResult } from "./report";
import { runScenario, SCENARIOS, SCENARIO_TITLES, type RunRecord, type ScenarioName } from "./scenarios";
import { SUBJECTS } from "./subjects";

export interface BenchOptions {
  n: number[];
  rateLimits: number[];
  scenarios: ScenarioName[];
  pace: Pace;
  /** Also run create and destroy of 500 or more instances under a rate limit. */
  full: boolean;
  /** Seconds the emulator's own throughput is measured for, per endpoint. */
  throughputSeconds: number;
  /** Instances of the parallel-against-serial create figure. */
  parallelCreateN: number;
  /** Instances (each with a policy) of the lifecycles through the engine's path; empty: none. */
  engineN: number[];
  doors: DoorName[];
  /** Sizes of the Fleet compared with the same fleet declared by hand (bench/fleet-component.ts); empty: none. */
  fleetN: number[];
  /** How many times each of the two is run; the fastest counts. */
  fleetRounds: number;
  /** Called after each run, for progress on stderr. */
  onRecord?: (record: RunRecord) => void;
  onEngineRecord?: (record: EngineRecord) => void;
  onFleetRecord?: (declared: string, record: EngineRecord) => void;
}

export interface BenchResults {
  settings: {
    via: string;
    engineVia: string;
    timeScale: number;
    pollIntervalMs: number;
    concurrency: string;
  };
  records: RunRecord[];
  /** The fleet program's lifecycle through the engine's path, per door and N. */
  engine: EngineRun[];
  /** A Fleet against the same fleet declared by hand, per door and N. */
  fleet: FleetComparison[];
  /** Runs left out (see --full). */
  skipped: string[];
  summary: Summary;
  targets: TargetResult[];
  totalMs: number;
}

/** How many creates the parallel-create figure runs at once: a fleet's creates through one engine. */
const PARALLEL_CREATES = 16;

export const VIA =
  "gpucloud: the provider implementation the state shim requires (dist/provider/dynamic.js providers), called in this process, no gRPC hop; baseline: bench/baseline.ts";

export async function runBench(options: BenchOptions): Promise<BenchResults> {
  const started = performance.now();
  // First: the in-process scenarios configure this process's providers, whose settings its programs'
  // data sources (the Fleet's price) would then read before their stack's config.
  const fleet: FleetComparison[] = [];
  for (const n of options.fleetN) {
    for (const door of options.doors) {
      fleet.push(
        ...(await fleetComparison(door, n, options.pace, options.fleetRounds, options.onFleetRecord)),
      );
    }
  }
  const records: RunRecord[] = [];
  const skipped: string[] = [];
  for (const rateLimit of options.rateLimits) {
    for (const n of options.n) {
      for (const scenario of options.scenarios) {
        if (!options.full && isSlowWrite(scenario, n, rateLimit)) {
          skipped.push(`${scenario} N=${n} rate limit ${rateLimit} (run with --full)`);
          continue;
        }
        for (const subject of SUBJECTS) {
          const record = await runScenario(scenario, subject, n, rateLimit, options.pace);
          records.push(record);
          options.onRecord?.(record);
        }
      }
    }
  }
  const engine: EngineRun[] = [];
  for (const n of options.engineN) {
    for (const door of options.doors) {
      const run = await engineRun(door, n, options.pace);
      run.records.forEach((r) => options.onEngineRecord?.(r));
      engine.push(run);
    }
  }
  const summary: Summary = {
    serializedProvider: await serializedProvider(),
    checkMsFor1000Inputs: await checkMs(1000),
    emulatorThroughput: await emulatorThroughput(options.throughputSeconds),
    parallelCreate: await parallelCreate(options.parallelCreateN, PARALLEL_CREATES, options.pace),
  };
  return {
    settings: {
      via: VIA,
      engineVia: ENGINE_VIA,
      timeScale: options.pace.timeScale,
      pollIntervalMs: options.pace.pollIntervalMs,
      concurrency: "all N operations at once (the Pulumi engine's default parallelism is unbounded)",
    },
    records,
    engine,
    fleet,
    skipped,
    summary,
    targets: [...targets(records, engine, summary, options.pace.pollIntervalMs), ...fleetTargets(fleet)],
    totalMs: Math.round(performance.now() - started),
  };
}

function isSlowWrite(scenario: ScenarioName, n: number, rateLimit: number): boolean {
  return rateLimit > 0 && n >= 500 && (scenario === "create" || scenario === "destroy");
}

const numbers = (text: string): number[] => text.split(",").map((s) => Number(s.trim()));

function options(argv: string[]): BenchOptions & { out: string } {
  const { values } = parseArgs({
    args: argv,
    options: {
      n: { type: "string" },
      "rate-limit": { type: "string" },
      scenarios: { type: "string" },
      smoke: { type: "boolean", default: false },
      full: { type: "boolean", default: false },
      "engine-n": { type: "string" },
      "fleet-n": { type: "string" },
      "fleet-rounds": { type: "string" },
      doors: { type: "string" },
      out: { type: "string", default: path.join("bench", "results.json") },
    },
  });
  const scenarios = (values.scenarios?.split(",") ?? SCENARIOS) as ScenarioName[];
  const unknown = scenarios.filter((s) => !SCENARIOS.includes(s));
  if (unknown.length > 0)
    throw new Error(`unknown scenario ${unknown.join(", ")}; pick from ${SCENARIOS.join(", ")}`);
  const doors = (values.doors?.split(",") ?? DOORS) as DoorName[];
  const unknownDoors = doors.filter((d) => !DOORS.includes(d));
  if (unknownDoors.length > 0)
    throw new Error(`unknown door ${unknownDoors.join(", ")}; pick from ${DOORS.join(", ")}`);
  const n = numbers(values.n ?? (values.smoke ? "10" : "10,100,500"));
  const rateLimits = numbers(values["rate-limit"] ?? "0,10");
  const engineText = values["engine-n"] ?? (values.smoke ? "2" : "100,500");
  const engineN = engineText === "" ? [] : numbers(engineText);
  const fleetText = values["fleet-n"] ?? (values.smoke ? "2" : "500");
  const fleetN = fleetText === "" ? [] : numbers(fleetText);
  const fleetRounds = numbers(values["fleet-rounds"] ?? (values.smoke ? "1" : "3"));
  if (
    [...n, ...rateLimits, ...engineN, ...fleetN, ...fleetRounds].some((v) => !Number.isInteger(v) || v < 0)
  ) {
    throw new Error(
      "--n, --rate-limit, --engine-n, --fleet-n and --fleet-rounds take comma-separated non-negative integers, e.g. --n 10,100",
    );
  }
  return {
    n,
    rateLimits,
    scenarios,
    pace: values.smoke ? SMOKE_PACE : BENCH_PACE,
    full: values.full,
    throughputSeconds: values.smoke ? 0.3 : 2,
    parallelCreateN: values.smoke ? 4 : 100,
    engineN,
    doors,
    fleetN,
    fleetRounds: Math.max(1, fleetRounds[0]),
    out: values.out,
  };
}

async function main(): Promise<void> {
  const opts = options(process.argv.slice(2));
  console.error(`bench: N=${opts.n.join(",")} rate limit=${opts.rateLimits.join(",")} (${VIA})`);
  const results = await runBench({
    ...opts,
    onRecord: (r) =>
      console.error(
        `  ${SCENARIO_TITLES[r.scenario]}, N=${r.n}, rate limit ${r.rateLimit}, ${r.subject}: ${r.apiCalls} calls, ${r.http429} 429s, ${r.wallMs} ms${r.error ? ` FAILED: ${r.error}` : ""}`,
      ),
    onFleetRecord: (declared, r) =>
      console.error(
        `  fleet ${declared}, ${r.operation}, N=${r.n}, ${r.door} door: ${r.apiCalls} calls, ${r.wallMs} ms${r.error ? ` FAILED: ${r.error}` : ""}`,
      ),
    onEngineRecord: (r) =>
      console.error(
        `  engine's path, ${r.operation}, N=${r.n} + ${r.n} policies, ${r.door} door: ${r.apiCalls} calls, ${r.wallMs} ms${r.error ? ` FAILED: ${r.error}` : ""}`,
      ),
  });
  console.log(table(results.records));
  console.log();
  if (results.engine.length > 0) {
    console.log(engineTable(results.engine, results.records));
    console.log();
  }
  if (results.fleet.length > 0) {
    console.log(fleetTable(results.fleet));
    console.log();
  }
  console.log(summaryText(results.summary, results.targets));
  if (results.skipped.length > 0) console.log(`\nleft out: ${results.skipped.join("; ")}`);
  console.log(`\nbench took ${(results.totalMs / 1000).toFixed(1)} s; ${VIA}; engine's path: ${ENGINE_VIA}`);
  fs.mkdirSync(path.dirname(opts.out), { recursive: true });
  fs.writeFileSync(opts.out, JSON.stringify(results, null, 2) + "\n");
  console.log(`wrote ${opts.out}`);
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err instanceof Error ? err.stack : err);
      process.exit(1);
    },
  );
}
