/**
 * `npm run demo`: the fleet example (examples/fleet) against a local emulator with a fast simulated
 * clock, through preview, up, drift made behind Pulumi's back, refresh, a repairing up and destroy.
 * Every resource goes through a front door of pulumi-gpucloud/testing, as under the Pulumi CLI: Pulumi's
 * dynamic-provider server (the default), or with `--door native` the package's native plugin.
 * Each step's plan is checked: any surprise ends the demo with a non-zero exit code.
 */
import * as path from "node:path";
import { parseArgs } from "node:util";
import { assertBuilt, ensurePackageLink, REPO_ROOT } from "../dev/self-link";
import { startEmulator, type RunningEmulator } from "../emulator";
import {
  dynamicFrontDoor,
  nativeFrontDoor,
  OperationError,
  secret,
  Stack,
  type FrontDoorFactory,
  type Op,
  type OperationResult,
} from "../testing";
import { DYNAMIC_PREFIX, NATIVE_PREFIX } from "../provider/tokens";
import { GpuCloudClient, terminalSafe } from "../sdk";
import { Progress, seconds } from "./progress";
import { countsLine, outputLines, planLines, style, type Style } from "./render";

export interface DemoOptions {
  /** Where the demo prints (default: stdout). */
  write?: (text: string) => void;
  /** Redraw progress lines in place and colour the output (default: whether stdout is a terminal). */
  tty?: boolean;
  /** Simulated seconds per real second: an instance takes 60 simulated seconds to start. */
  timeScale?: number;
  /** Instances in the fleet. */
  count?: number;
  /** How the resources reach their provider (default: dynamic). */
  door?: DemoDoor;
}

export const DEMO_DOORS = ["dynamic", "native"] as const;
export type DemoDoor = (typeof DEMO_DOORS)[number];

interface DoorPlan {
  open: () => FrontDoorFactory;
  /** How the demo names the door to its reader. */
  through: string;
  /** How the state must keep the fleet's resources: their type tokens' start, and whether with provider code. */
  typePrefix: string;
  providerCode: boolean;
}

const DOORS: Record<DemoDoor, DoorPlan> = {
  dynamic: {
    open: dynamicFrontDoor,
    through: "Pulumi's dynamic-provider server",
    typePrefix: DYNAMIC_PREFIX,
    providerCode: true,
  },
  native: {
    open: () => nativeFrontDoor(),
    through: "the native plugin pulumi-resource-gpucloud",
    typePrefix: NATIVE_PREFIX,
    providerCode: false,
  },
};

export interface DemoReport {
  preview: OperationResult;
  up: OperationResult;
  refresh: OperationResult;
  repair: OperationResult;
  destroy: OperationResult;
  durationMs: number;
}

/** A step did something other than what the demo expects of it. */
export class DemoError extends Error {
  override readonly name = "DemoError";
}

const API_KEY = "demo-key";
const IDLE_MINUTES = 30;
/** How long after an instance runs its web UI answers, in simulated seconds (the fleet waits for it). */
const SERVICES_SECONDS = 30;
/** The title the demo gives an instance out of band, as someone clicking in the console would. */
const HAND_TITLE = "renamed-by-hand";

/** The program the demo runs: the compiled fleet example, exactly as users get it. */
export const FLEET_PROGRAM = path.join(REPO_ROOT, "dist", "examples", "fleet", "index.js");

type Expected = Record<string, { op: Op; changes?: string[] }>;

export class Demo {
  private readonly write: (text: string) => void;
  private readonly s: Style;
  private readonly tty: boolean;
  private emulator?: RunningEmulator;
  private stack?: Stack;
  private api?: GpuCloudClient;
  private progress?: Progress;

  constructor(private readonly options: DemoOptions = {}) {
    this.write = options.write ?? ((text) => process.stdout.write(text));
    this.tty = options.tty ?? process.stdout.isTTY === true;
    this.s = style(this.tty);
  }

  async run(): Promise<DemoReport> {
    const started = Date.now();
    const count = this.options.count ?? 3;
    const timeScale = this.options.timeScale ?? 60;
    const names = Array.from({ length: count }, (_, i) => `fleet-${i}`);
    const [renamed, idled] = names;
    try {
      const { stack, api, progress } = await this.start(count, timeScale);

      this.heading("preview", "pulumi preview: what would `pulumi up` do?");
      const preview = await stack.preview();
      this.show(preview);
      expectPlan(preview, everyone(names, "create"));

      this.heading(
        "up",
        `pulumi up: create the fleet (instances take 60 simulated seconds to start, their web UIs ${SERVICES_SECONDS} more)`,
      );
      const up = await stack.up();
      progress.stop();
      this.show(up);
      expectPlan(up, everyone(names, "create"));
      this.expectStateThroughDoor(stack);
      await this.expectServicesReady(up.outputs.serviceUrls);
      const uuids = instanceIds(stack);
      await Promise.all(names.map((n) => this.admin("PUT", `/instances/${uuids[n]}/utilization`, busy())));
      this.say(`The fleet is at work: every GPU reports 85% utilisation to the emulator.`);

      this.heading("drift", "Drift: two changes made outside Pulumi");
      await api.instances.updateTitle(uuids[renamed], HAND_TITLE);
      this.say(`${renamed}: renamed to "${HAND_TITLE}" through the API (POST /instance/update_title).`);
      await this.admin("PUT", `/instances/${uuids[idled]}/utilization`, { gpu: 0, fb: 0 });
      await this.admin("POST", "/clock/advance", { seconds: (IDLE_MINUTES + 1) * 60 });
      const stopped = await api.instances.info(uuids[idled]);
      if (stopped.status !== 22) {
        throw new DemoError(
          `${idled} should have been shut down by its idle policy, but its status is ${stopped.status}.`,
        );
      }
      this.say(
        `${idled}: its GPUs went idle and the clock moved ${IDLE_MINUTES + 1} minutes: ` +
          `its ${IDLE_MINUTES}-minute idle policy shut it down (status ${stopped.status}).`,
      );

      this.heading("refresh", "pulumi refresh: read every resource back from the cloud");
      const refresh = await stack.refresh();
      this.show(refresh);
      expectPlan(refresh, {
        ...everyone(names, "same"),
        [renamed]: { op: "update", changes: ["title"] },
        [idled]: { op: "update", changes: ["running", "status", "statusName"] },
      });

      this.heading("repair", "pulumi up: put the fleet back as the program declares it");
      await this.admin("PUT", `/instances/${uuids[idled]}/utilization`, busy());
      const repair = await stack.up();
      progress.stop();
      this.show(repair);
      expectPlan(repair, {
        ...everyone(names, "same"),
        [renamed]: { op: "update", changes: ["title"] },
        [idled]: { op: "update", changes: ["running"] },
      });
      const [title, status] = await Promise.all([
        api.instances.info(uuids[renamed]).then((i) => i.title),
        api.instances.info(uuids[idled]).then((i) => i.status),
      ]);
      if (title !== renamed || status !== 2) {
        throw new DemoError(
          `After the repair ${renamed} is titled "${terminalSafe(title ?? "", 60)}" and ${idled} has status ${status}.`,
        );
      }
      this.say(`The cloud agrees: ${renamed} is titled "${title}" again and ${idled} is running.`);

      this.heading("destroy", "pulumi destroy: remove everything, policies before their instances");
      const destroy = await stack.destroy();
      this.show(destroy);
      expectPlan(destroy, everyone(names, "delete"));
      const { total } = await api.instances.list();
      if (total !== 0) throw new DemoError(`${total} instances are left after destroy.`);

      const durationMs = Date.now() - started;
      this.write(
        `\n${this.s.bold("Demo passed")}: ${count * 2} resources created, 2 drifts found and repaired, ` +
          `${count * 2} resources destroyed, in ${seconds(durationMs)}.\n`,
      );
      return { preview, up, refresh, repair, destroy, durationMs };
    } finally {
      await this.cleanup();
    }
  }

  /** Stops the provider server and the emulator; safe to call twice. */
  async cleanup(): Promise<void> {
    this.progress?.stop();
    const stack = this.stack;
    const emulator = this.emulator;
    const api = this.api;
    this.stack = this.emulator = this.api = this.progress = undefined;
    await stack?.close();
    await api?.close();
    await emulator?.close();
  }

  private async start(count: number, timeScale: number) {
    this.emulator = await startEmulator({
      port: 0,
      timeScale,
      apiKeys: [API_KEY],
      durations: { services: SERVICES_SECONDS },
    });
    this.write(
      `${this.s.bold("pulumi-gpucloud demo")}: the fleet example (examples/fleet) against a local emulator at ` +
        `${this.emulator.url} (simulated clock x${timeScale}), through ${this.door.through}.\n`,
    );
    this.api = new GpuCloudClient({ baseUrl: this.emulator.url, apiKey: API_KEY });
    this.progress = new Progress(this.write, this.tty, this.api, this.s);
    const config = {
      "gpucloud:baseUrl": this.emulator.url,
      "gpucloud:apiKey": secret(API_KEY),
      // The clock runs fast, so the provider polls often (the default, 5 s, suits the live cloud).
      "gpucloud:pollIntervalMs": "100",
      "fleet:count": String(count),
      "fleet:gpuModel": "4090D",
      "fleet:gpuCount": "1",
      "fleet:podTitle": "ComfyUI",
      "fleet:podTag": "v1.3.1",
      "fleet:idleMinutes": String(IDLE_MINUTES),
    };
    this.say(
      `Stack config: ${Object.entries(config)
        .filter(([k]) => k.startsWith("fleet:"))
        .map(([k, v]) => `${k}=${v}`)
        .join(" ")}`,
    );
    // The program reaches the package by its name, as users' programs do: through the repository's self link.
    assertBuilt();
    ensurePackageLink();
    this.stack = await Stack.open({
      program: FLEET_PROGRAM,
      project: "gpucloud-fleet",
      stack: "demo",
      config,
      frontDoor: this.door.open(),
      onEvent: this.progress.onEvent,
    });
    return { stack: this.stack, api: this.api, progress: this.progress };
  }

  private get door(): DoorPlan {
    return DOORS[this.options.door ?? "dynamic"];
  }

  /** The state keeps the fleet as the door stores it: under its type tokens, with or without provider code. */
  private expectStateThroughDoor(stack: Stack): void {
    const { typePrefix, providerCode } = this.door;
    const resources = stack.current.resources;
    const misfiled = resources.filter(
      (r) => !r.type.startsWith(typePrefix) || (r.provider !== undefined) !== providerCode,
    );
    if (misfiled.length > 0) {
      throw new DemoError(
        `Through ${this.door.through} the state should keep every resource as ${typePrefix}* ` +
          `${providerCode ? "with" : "without"} provider code, but not ${misfiled.map((r) => `${r.name} (${r.type})`).join(", ")}.`,
      );
    }
    this.say(
      `The state keeps ${resources.length} resources as ${typePrefix}*, ` +
        `${providerCode ? "each with its provider's code" : "with no provider code"}.`,
    );
  }

  private heading(step: string, title: string): void {
    this.write(`\n${this.s.bold(`== ${step}`)} ${title}\n`);
  }

  private say(text: string): void {
    if (this.progress) this.progress.line(text);
    else this.write(`${text}\n`);
  }

  private show(result: OperationResult): void {
    for (const line of planLines(result, this.s, result.operation === "refresh")) this.write(`${line}\n`);
    if (result.operation === "preview" || result.operation === "up") {
      this.write("Outputs:\n");
      for (const line of outputLines(result.outputs)) this.write(`${line}\n`);
    }
    this.write(`${countsLine(result, this.s)}  ${this.s.dim(`(${seconds(result.durationMs)})`)}\n`);
  }

  /** Every web UI answers as soon as `up` returns: the fleet's instances waited for them (waitForServices). */
  private async expectServicesReady(serviceUrls: unknown): Promise<void> {
    const urls = Object.values(serviceUrls as Record<string, string[]>).flat();
    const answers = await Promise.all(urls.map(async (url) => ({ url, status: (await fetch(url)).status })));
    const silent = answers.filter((a) => a.status !== 200);
    if (urls.length === 0 || silent.length > 0) {
      throw new DemoError(
        `Every web UI should answer once up returns, but ${urls.length === 0 ? "there are none" : silent.map((a) => `${a.url} answered ${a.status}`).join(", ")}.`,
      );
    }
    this.say(
      `Every web UI answers (HTTP 200) as up returns: the instances waited for them (waitForServices).`,
    );
  }

  private async admin(method: string, route: string, body: unknown): Promise<void> {
    const response = await fetch(`${this.emulator!.url}/_emulator${route}`, {
      method,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new DemoError(`${method} /_emulator${route} answered ${response.status}`);
  }
}

/** Runs the whole demo once; resolves with each step's result, rejects (after cleaning up) on any surprise. */
export function runDemo(options: DemoOptions = {}): Promise<DemoReport> {
  return new Demo(options).run();
}

function busy() {
  return { gpu: 85, fb: 60 };
}

function everyone(names: string[], op: Op): Expected {
  const expected: Expected = {};
  for (const name of names) {
    expected[name] = { op };
    expected[`${name}-idle`] = { op };
  }
  return expected;
}

function instanceIds(stack: Stack): Record<string, string> {
  return Object.fromEntries(
    stack.current.resources.filter((r) => r.type.endsWith(":Instance")).map((r) => [r.name, r.id]),
  );
}

/** Every resource did what was expected, with exactly the expected changed properties. */
export function expectPlan(result: OperationResult, expected: Expected): void {
  const problems: string[] = [];
  const seen = new Set<string>();
  // By name: steps that run concurrently finish in any order, and the message should not.
  for (const step of [...result.steps].sort((a, b) => a.name.localeCompare(b.name))) {
    seen.add(step.name);
    const want = expected[step.name];
    if (!want) {
      problems.push(`${step.name}: unexpected ${step.op}`);
      continue;
    }
    if (step.op !== want.op) problems.push(`${step.name}: ${step.op} instead of ${want.op}`);
    const changed = step.changes.map((c) => c.name).sort();
    if (want.changes && changed.join() !== [...want.changes].sort().join()) {
      problems.push(`${step.name}: changed [${changed.join(", ")}] instead of [${want.changes.join(", ")}]`);
    }
  }
  for (const name of Object.keys(expected)) if (!seen.has(name)) problems.push(`${name}: no step at all`);
  if (problems.length > 0) {
    throw new DemoError(`The ${result.operation} did not go as expected: ${problems.join("; ")}.`);
  }
}

/** The command line was not understood. */
export class DemoUsageError extends Error {
  override readonly name = "DemoUsageError";
}

const USAGE = "Usage: npm run demo [-- --door dynamic|native]";

/** `npm run demo -- --door native`: the demo's options from its command line. */
export function demoOptionsFrom(args: string[]): DemoOptions {
  let values: { door?: string };
  try {
    ({ values } = parseArgs({ args, options: { door: { type: "string" } }, strict: true }));
  } catch (err) {
    throw new DemoUsageError(`${(err as Error).message}. ${USAGE}`);
  }
  const door = values.door ?? "dynamic";
  if (!(DEMO_DOORS as readonly string[]).includes(door)) {
    throw new DemoUsageError(
      `--door must be ${DEMO_DOORS.join(" or ")}, not "${door}": dynamic runs the resources through ` +
        `Pulumi's dynamic-provider server, native through the package's plugin. ${USAGE}`,
    );
  }
  return { door: door as DemoDoor };
}

async function main(): Promise<void> {
  let options: DemoOptions;
  try {
    options = demoOptionsFrom(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  const demo = new Demo(options);
  const interrupted = () => {
    process.stdout.write("\nInterrupted: stopping the provider server and the emulator.\n");
    void demo.cleanup().finally(() => process.exit(130));
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  try {
    await demo.run();
  } catch (err) {
    const expected = err instanceof OperationError || err instanceof DemoError;
    const message = expected ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err);
    process.stderr.write(`\nDemo failed: ${message}\n`);
    process.exitCode = 1;
  }
}

if (require.main === module) void main();
