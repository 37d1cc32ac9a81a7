/**
 * A Fleet against the same fleet declared by hand, through the engine's path and either front door: the
 * fleet program (bench/fleet-program.ts, N Instances each with an IdleClosePolicy, and with
 * `bench:fleetOutputs` the outputs a Fleet gives: uuids, addresses and the catalogue's price) and one
 * Fleet of N (bench/fleet-component-program.ts), each on a fresh emulator with its own provider process,
 * through preview, up and destroy. The two take turns (by hand first in odd rounds, the Fleet first in
 * even ones) and each operation's wall time is the fastest of the rounds, so neither meets a machine
 * that only the other was spared. The target: the Fleet's up costs no more API calls, and takes at most
 * 10% longer. The calls compared leave out the walks of /instance/list that the waits share: their number
 * follows how long the waits last (one walk a poll interval), and varies by tens from one run of the same
 * program to the next.
 */
import * as path from "node:path";
import { REPO_ROOT } from "../dev/self-link";
import { Stack } from "../testing";
import { BenchCloud, type Pace } from "./cloud";
import {
  FLEET_PROGRAM,
  fleetConfig,
  frontDoorOf,
  measured,
  type DoorName,
  type EngineOperation,
  type EngineRecord,
} from "./engine";
import { aligned, listCalls, writes, type TargetResult } from "./report";

export const FLEET_COMPONENT_PROGRAM = path.join(REPO_ROOT, "dist", "bench", "fleet-component-program.js");

export type Declared = "by hand" | "Fleet";
const OPERATIONS: EngineOperation[] = ["preview", "up", "destroy"];

export interface FleetComparison {
  door: DoorName;
  n: number;
  declared: Declared;
  /** Per operation: the calls of the first round, the fastest wall time of every round. */
  records: EngineRecord[];
}

async function lifecycle(declared: Declared, door: DoorName, n: number, pace: Pace): Promise<EngineRecord[]> {
  const cloud = await BenchCloud.start(0, pace.timeScale);
  let stack: Stack | undefined;
  try {
    stack = await Stack.open({
      program: declared === "Fleet" ? FLEET_COMPONENT_PROGRAM : FLEET_PROGRAM,
      project: "bench",
      stack: `${door}-${n}`,
      config: { ...fleetConfig(cloud, n, pace.pollIntervalMs), "bench:fleetOutputs": "true" },
      frontDoor: frontDoorOf(door),
    });
    const records: EngineRecord[] = [];
    for (const operation of OPERATIONS) {
      const record = await measured(stack, operation, cloud, { door, n });
      records.push(record);
      if (record.error) break;
    }
    return records;
  } finally {
    await stack?.close();
    await cloud.close();
  }
}

/** Both ways of declaring a fleet of `n`, through `door`, `rounds` times each. */
export async function fleetComparison(
  door: DoorName,
  n: number,
  pace: Pace,
  rounds: number,
  onRecord?: (declared: Declared, record: EngineRecord) => void,
): Promise<FleetComparison[]> {
  const runs: Record<Declared, EngineRecord[][]> = { "by hand": [], Fleet: [] };
  for (let round = 0; round < rounds; round++) {
    const order: Declared[] = round % 2 === 0 ? ["by hand", "Fleet"] : ["Fleet", "by hand"];
    for (const declared of order) {
      const records = await lifecycle(declared, door, n, pace);
      records.forEach((record) => onRecord?.(declared, record));
      runs[declared].push(records);
    }
  }
  return (["by hand", "Fleet"] as const).map((declared) => ({
    door,
    n,
    declared,
    records: fastest(runs[declared]),
  }));
}

function fastest(rounds: EngineRecord[][]): EngineRecord[] {
  return rounds[0].map((first, i) => ({
    ...first,
    wallMs: Math.min(...rounds.map((records) => records[i]?.wallMs ?? Infinity)),
  }));
}

function upOf(runs: FleetComparison[], door: DoorName, n: number, declared: Declared) {
  return runs
    .find((r) => r.door === door && r.n === n && r.declared === declared)
    ?.records.find((r) => r.operation === "up");
}

function callsBesidesWalks(record: EngineRecord): number {
  return record.apiCalls - listCalls(record);
}

export function fleetTable(runs: FleetComparison[]): string {
  const header = ["operation", "door", "N", "declared", "API calls", "list calls", "writes", "wall ms"];
  const rows = runs.flatMap((run) =>
    run.records.map((r) => [
      r.operation,
      r.error ? `${run.door} (FAILED)` : run.door,
      `${run.n}+${run.n}`,
      run.declared,
      String(r.apiCalls),
      String(listCalls(r)),
      String(writes(r)),
      String(r.wallMs),
    ]),
  );
  return [
    "a Fleet of N against N Instances and N policies declared by hand (with the Fleet's outputs); wall ms the fastest of the rounds:",
    ...aligned(header, rows),
  ].join("\n");
}

export function fleetTargets(runs: FleetComparison[]): TargetResult[] {
  const cases = [...new Set(runs.map((r) => `${r.door} ${r.n}`))].map((key) => {
    const [door, n] = key.split(" ");
    return { door: door as DoorName, n: Number(n) };
  });
  return cases.map(({ door, n }) => {
    const [byHand, fleet] = [upOf(runs, door, n, "by hand"), upOf(runs, door, n, "Fleet")];
    const ran = byHand && fleet && !byHand.error && !fleet.error;
    return {
      target: `up of a Fleet of ${n} through the ${door} door: no more API calls than ${n} Instances and ${n} policies by hand (besides the waits' shared list walks), wall time within 10%`,
      measured: ran
        ? `${callsBesidesWalks(fleet)} calls vs ${callsBesidesWalks(byHand)} (list walks ${listCalls(fleet)} vs ${listCalls(byHand)}); ` +
          `${fleet.wallMs} ms vs ${byHand.wallMs} ms (${((fleet.wallMs / byHand.wallMs - 1) * 100).toFixed(1)}%)`
        : "not run, or failed",
      met: ran
        ? callsBesidesWalks(fleet) <= callsBesidesWalks(byHand) && fleet.wallMs <= 1.1 * byHand.wallMs
        : null,
    };
  });
}
