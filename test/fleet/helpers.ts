/** A stack of the fleet fixture program (fixtures/fleet-program.ts) through either front door, on a frozen emulator. */
import * as path from "node:path";
import { GpuCloudClient } from "pulumi-gpucloud/sdk";
import { assertBuilt, ensurePackageLink } from "../../dev/self-link";
import {
  dynamicFrontDoor,
  nativeFrontDoor,
  secret,
  Stack,
  type EngineEvent,
  type OperationResult,
  type PolicyPackOptions,
  type Props,
} from "../../testing";
import { DEMO_KEY, gpuUuid, pod, startTestEmulator, type TestEmulator } from "../emulator/helpers";
import { advancing } from "../support/clock";

export const FLEET_PROGRAM = path.join(__dirname, "fixtures", "fleet-program.ts");

export type DoorName = "dynamic" | "native";

export interface FleetWorld {
  emu: TestEmulator;
  api: GpuCloudClient;
  stack: Stack;
  podUuid: string;
  gpu4090: string;
  gpu5090: string;
  /** Runs the fleet program with these Fleet arguments from the next operation on. */
  setArgs(args: Props): Promise<void>;
  /** Runs an operation while the frozen clock moves, so the provider's waits end without sleeping. */
  advancing<T>(work: Promise<T>): Promise<T>;
  /** Sets what every GPU of the instance reports to the idle policies, in percent. */
  setUtilization(instanceUuid: string, percent: number): Promise<void>;
  /** The API calls the emulator logged since the last `clearLog`, as `METHOD /path`. */
  calls(): Promise<string[]>;
  clearLog(): Promise<void>;
  close(): Promise<void>;
}

export async function openFleet(
  door: DoorName,
  args: Props,
  {
    onEvent,
    policyPacks,
  }: { onEvent?: (event: EngineEvent) => void; policyPacks?: PolicyPackOptions[] } = {},
): Promise<FleetWorld> {
  assertBuilt();
  ensurePackageLink();
  // Every GPU busy: an idle policy fires only where a test idles the instance, however far the clock moves.
  const emu = await startTestEmulator({ utilization: { gpu: 100, fb: 100 } });
  const api = new GpuCloudClient({ baseUrl: emu.url, apiKey: DEMO_KEY });
  const podUuid = (await pod(emu, "ComfyUI")).uuid;
  const gpu4090 = await gpuUuid(emu, "4090D");
  const gpu5090 = await gpuUuid(emu, "5090");
  const config = (fleetArgs: Props) => ({
    "gpucloud:baseUrl": emu.url,
    "gpucloud:apiKey": secret(DEMO_KEY),
    "gpucloud:pollIntervalMs": "20",
    "fleet:podUuid": podUuid,
    "fleet:gpuUuid": gpu4090,
    "fleet:args": JSON.stringify(fleetArgs),
  });
  const stack = await Stack.open({
    program: FLEET_PROGRAM,
    project: "fleet-test",
    stack: door,
    config: config(args),
    frontDoor: door === "native" ? nativeFrontDoor() : dynamicFrontDoor(),
    onEvent,
    policyPacks,
  });
  return {
    emu,
    api,
    stack,
    podUuid,
    gpu4090,
    gpu5090,
    setArgs: (next) => stack.setConfig(config(next)),
    advancing: (work) => advancing(emu, work),
    async setUtilization(instanceUuid, percent) {
      await emu.admin("PUT", `/instances/${instanceUuid}/utilization`, { gpu: percent, fb: percent });
    },
    async calls() {
      const log = await emu.admin("GET", "/requests");
      return (log.body.requests as { method: string; path: string }[]).map((r) => `${r.method} ${r.path}`);
    },
    async clearLog() {
      await emu.admin("DELETE", "/requests");
    },
    async close() {
      await stack.close();
      await api.close();
      await emu.close();
    },
  };
}

/** `{ name: op }` of every step. */
export function plan(result: OperationResult): Record<string, string> {
  return Object.fromEntries(result.steps.map((s) => [s.name, s.op]));
}
