/**
 * The engine's path: bench/fleet-program.ts (N Instances, each with an IdleClosePolicy) run through
 * `pulumi-gpucloud/testing` as a user's program runs under the CLI, with either front door: Pulumi's
 * dynamic-provider server over gRPC, or the native plugin `pulumi-resource-gpucloud`. Each door gets a
 * fresh emulator and one provider process for the whole lifecycle (preview, up, preview --refresh,
 * refresh, destroy); the provider process's peak memory is read from /proc before it stops.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { REPO_ROOT } from "../dev/self-link";
import {
  dynamicFrontDoor,
  nativeFrontDoor,
  secret,
  Stack,
  type FrontDoorFactory,
  type OperationResult,
} from "../testing";
import { BENCH_KEY, BenchCloud, type Counts, type Pace } from "./cloud";

export const ENGINE_VIA =
  "the fleet program (bench/fleet-program.ts) run by pulumi-gpucloud/testing: dynamic door = Pulumi's dynamic-provider server over gRPC, native door = the pulumi-resource-gpucloud plugin over gRPC; one provider process per door and N for the whole lifecycle";

export type DoorName = "dynamic" | "native";
export const DOORS: DoorName[] = ["dynamic", "native"];

export type EngineOperation = "preview" | "up" | "preview --refresh" | "refresh" | "destroy";
export const ENGINE_OPERATIONS: EngineOperation[] = [
  "preview",
  "up",
  "preview --refresh",
  "refresh",
  "destroy",
];

/** One operation of the lifecycle through one door. */
export interface EngineRecord extends Counts {
  operation: EngineOperation;
  door: DoorName;
  /** Instances; the program declares as many policies. */
  n: number;
  wallMs: number;
  /** Resources the operation planned or read (its steps): a refresh's "one read per resource" baseline. */
  steps: number;
  error?: string;
}

export interface EngineRun {
  door: DoorName;
  n: number;
  records: EngineRecord[];
  /** The provider process's peak resident memory (VmHWM) over the lifecycle, in MB; null where /proc has none. */
  providerPeakMemoryMb: number | null;
}

/** The compiled program (`npm run build`). */
export const FLEET_PROGRAM = path.join(REPO_ROOT, "dist", "bench", "fleet-program.js");

export function frontDoorOf(door: DoorName): FrontDoorFactory {
  return door === "native" ? nativeFrontDoor() : dynamicFrontDoor();
}

function operate(stack: Stack, operation: EngineOperation): Promise<OperationResult> {
  switch (operation) {
    case "preview":
      return stack.preview();
    case "up":
      return stack.up();
    case "preview --refresh":
      return stack.preview({ refresh: true });
    case "refresh":
      return stack.refresh();
    case "destroy":
      return stack.destroy();
  }
}

/** Stack config for the fleet program of `n` instances against `cloud`. */
export function fleetConfig(cloud: BenchCloud, n: number, pollIntervalMs: number): Record<string, unknown> {
  const [spec] = cloud.specs(1);
  return {
    "gpucloud:baseUrl": cloud.url,
    "gpucloud:apiKey": secret(BENCH_KEY),
    "gpucloud:pollIntervalMs": String(pollIntervalMs),
    "bench:count": String(n),
    "bench:podUuid": spec.podUuid,
    "bench:gpuUuid": spec.gpuUuid,
  };
}

/** The lifecycle of the fleet program of `n` through `door`, one record per operation; it stops at a failure. */
export async function engineRun(door: DoorName, n: number, pace: Pace): Promise<EngineRun> {
  const cloud = await BenchCloud.start(0, pace.timeScale);
  let stack: Stack | undefined;
  try {
    stack = await Stack.open({
      program: FLEET_PROGRAM,
      project: "bench",
      stack: `${door}-${n}`,
      config: fleetConfig(cloud, n, pace.pollIntervalMs),
      frontDoor: frontDoorOf(door),
    });
    const records: EngineRecord[] = [];
    for (const operation of ENGINE_OPERATIONS) {
      const record = await measured(stack, operation, cloud, { door, n });
      records.push(record);
      if (record.error) break;
    }
    return { door, n, records, providerPeakMemoryMb: providerPeakMemoryMb() };
  } finally {
    await stack?.close();
    await cloud.close();
  }
}

/** One operation of `stack`, with the API calls `cloud` logged for it and its wall time. */
export async function measured(
  stack: Stack,
  operation: EngineOperation,
  cloud: BenchCloud,
  run: { door: DoorName; n: number },
): Promise<EngineRecord> {
  await cloud.clearLog();
  const started = performance.now();
  let steps = 0;
  let error: string | undefined;
  try {
    steps = (await operate(stack, operation)).steps.length;
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  }
  const wallMs = Math.round(performance.now() - started);
  return { operation, ...run, wallMs, steps, ...(await cloud.counts()), ...(error ? { error } : {}) };
}

/**
 * The peak resident memory of this process's child that serves the providers (the dynamic-provider
 * server or the plugin: the only child while a stack is open), from its /proc status.
 */
function providerPeakMemoryMb(): number | null {
  const peaks = childProcessIds().map((pid) => {
    const status = readOrEmpty(`/proc/${pid}/status`);
    const kb = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
    return kb === undefined ? 0 : Number(kb) / 1024;
  });
  const peak = Math.max(0, ...peaks);
  return peak > 0 ? Math.round(peak) : null;
}

function childProcessIds(): number[] {
  const tasks = `/proc/${process.pid}/task`;
  if (!fs.existsSync(tasks)) return [];
  return fs
    .readdirSync(tasks)
    .flatMap((tid) => readOrEmpty(path.join(tasks, tid, "children")).split(/\s+/))
    .filter((pid) => pid !== "")
    .map(Number);
}

function readOrEmpty(file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
