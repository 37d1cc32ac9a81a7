/**
 * Stack.open's `clock`: against an emulator whose clock stands still (`timeScale: 0`), the harness moves
 * the clock while steps wait on it, and only then, so an up ends and what a test sees between operations
 * is what it advanced to (docs/testing.md, "Moving the emulator's clock").
 */
import * as path from "node:path";
import { startEmulator, type RunningEmulator } from "pulumi-gpucloud/emulator";
import { GpuCloudClient } from "pulumi-gpucloud/sdk";
import { assertBuilt, ensurePackageLink } from "../../dev/self-link";
import { OperationError, Stack, type OperationResult, type Props, type SteppedClock } from "../../testing";
import { DEMO_KEY } from "../emulator/helpers";
import { providerConfig } from "../support/providers";

const PROGRAM = path.join(__dirname, "fixtures", "boxes-program.ts");

const plan = (result: OperationResult) => result.steps.map((s) => `${s.name} ${s.op}`).sort();

describe("a stack whose emulator's clock stands still", () => {
  let emulator: RunningEmulator;
  let api: GpuCloudClient;
  const stacks: Stack[] = [];

  beforeAll(async () => {
    assertBuilt();
    ensurePackageLink();
    emulator = await startEmulator({ port: 0, timeScale: 0 });
    api = new GpuCloudClient({ baseUrl: emulator.url, apiKey: DEMO_KEY });
  });
  afterEach(async () => {
    await Promise.all(stacks.splice(0).map((stack) => stack.close()));
    await emulator.reset();
  });
  afterAll(async () => {
    await api.close();
    await emulator.close();
  });

  async function open(config: Props, clock?: SteppedClock): Promise<Stack> {
    const stack = await Stack.open({
      program: PROGRAM,
      project: "boxes",
      stack: "test",
      config: providerConfig(emulator.url, DEMO_KEY, config),
      clock,
    });
    stacks.push(stack);
    return stack;
  }

  it("brings a fleet up and down, the clock moved while its creates and deletes waited, one move at a time", async () => {
    const moves: number[] = [];
    let moving = 0;
    let overlapping = 0;
    const watched: SteppedClock = {
      async advance(seconds) {
        moves.push(seconds);
        overlapping = Math.max(overlapping, ++moving);
        try {
          await emulator.advance(seconds);
        } finally {
          moving -= 1;
        }
      },
    };
    const stack = await open({ "box:count": "3" }, watched);
    const up = await stack.up();
    expect(plan(up)).toEqual(
      ["box-0", "box-1", "box-2"].flatMap((name) => [`${name} create`, `${name}-idle create`]).sort(),
    );
    expect(up.outputs.statuses).toEqual(["running", "running", "running"]);
    // Three creates waiting side by side share one pace: never two moves at once.
    expect(overlapping).toBe(1);
    expect(moves.reduce((sum, s) => sum + s, 0)).toBeGreaterThanOrEqual(60);
    await stack.destroy();
    expect((await api.instances.list()).total).toBe(0);
  });

  it("leaves the clock where it was through previews and refreshes, so the test's own advance decides what they see", async () => {
    const stack = await open({}, emulator);
    await stack.up();
    const after = emulator.now();
    expect(plan(await stack.preview())).toEqual(["box-0 same", "box-0-idle same"]);
    expect(plan(await stack.refresh())).toEqual(["box-0 same", "box-0-idle same"]);
    expect(emulator.now()).toBe(after);
    // The idle policy's 30 minutes, passed by the test: the instance is stopped, and refresh shows it.
    await emulator.advance(31 * 60);
    const refreshed = await stack.preview({ refresh: true });
    expect(plan(refreshed)).toEqual(["box-0 update", "box-0-idle same"]);
    expect(emulator.now()).toBe(after + 31 * 60);
  });

  it("without it, a create waits for a boot that never comes until its timeout", async () => {
    const stack = await open({ "box:waitTimeoutSeconds": "1" });
    await expect(stack.up()).rejects.toThrow(/create of box-0 \(gpucloud:Instance\) failed: .*timed out/i);
  });

  it("says why a wait could not end when the clock cannot be moved", async () => {
    const broken: SteppedClock = { advance: () => Promise.reject(new Error("the emulator is gone")) };
    const stack = await open({ "box:waitTimeoutSeconds": "1" }, broken);
    const failure = await stack.up().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OperationError);
    expect((failure as Error).message).toContain(
      "Its waits could not end: the harness could not move the emulator's clock (the emulator is gone).",
    );
  });
});
