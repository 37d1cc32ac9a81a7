/** A stack of the fleet fixture program (fixtures/fleet-program.ts) through either front door, on a frozen emulator. */
import * as fs from "node:fs";
import * as os from "node:os";
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
  /**
   * Runs the fleet program with these Fleet arguments from the next operation on: a change of the stack's
   * config (a new provider process, as the CLI starts one for each run), or, for a world opened with
   * `argsInFile`, of the file the program reads them from (the same provider process).
   */
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
    argsInFile = false,
  }: { onEvent?: (event: EngineEvent) => void; policyPacks?: PolicyPackOptions[]; argsInFile?: boolean } = {},
): Promise<FleetWorld> {
  assertBuilt();
  ensurePackageLink();
  // Every GPU busy: an idle policy fires only where a test idles the instance, however far the clock moves.
  const emu = await startTestEmulator({ utilization: { gpu: 100, fb: 100 } });
  const api = new GpuCloudClient({ baseUrl: emu.url, apiKey: DEMO_KEY });
  const podUuid = (await pod(emu, "ComfyUI")).uuid;
  const gpu4090 = await gpuUuid(emu, "4090D");
  const gpu5090 = await gpuUuid(emu, "5090");
  const argsDir = argsInFile ? fs.mkdtempSync(path.join(os.tmpdir(), "fleet-args-")) : undefined;
  const argsFile = argsDir && path.join(argsDir, "args.json");
  if (argsFile) fs.writeFileSync(argsFile, JSON.stringify(args));
  const config = (fleetArgs: Props) => ({
    "gpucloud:baseUrl": emu.url,
    "gpucloud:apiKey": secret(DEMO_KEY),
    "gpucloud:pollIntervalMs": "20",
    "fleet:podUuid": podUuid,
    "fleet:gpuUuid": gpu4090,
    ...(argsFile ? { "fleet:argsFile": argsFile } : { "fleet:args": JSON.stringify(fleetArgs) }),
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
    setArgs: async (next) =>
      argsFile ? fs.writeFileSync(argsFile, JSON.stringify(next)) : stack.setConfig(config(next)),
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
      if (argsDir) fs.rmSync(argsDir, { recursive: true, force: true });
    },
  };
}

/** `{ name: op }` of every step. */
export function plan(result: OperationResult): Record<string, string> {
  return Object.fromEntries(result.steps.map((s) => [s.name, s.op]));
}
