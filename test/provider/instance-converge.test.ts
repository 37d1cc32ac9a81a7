/**
 * Any sequence of Instance updates converges: after every `up`, `pulumi preview --refresh` shows no
 * change. Programs are drawn by fast-check (title, running, shutdownAt, waitTimeoutSeconds) and applied
 * through the real provider against the emulator, as `pulumi up --refresh` applies them; the emulator's
 * clock is frozen and moved by the test, between ups and while the provider waits.
 */
import fc from "fast-check";
import type { Props, ResourceState } from "../harness";
import { reportFigure } from "../support/figures";
import { startWorld, type World } from "../support/world";

const HOUR = 3600;
/** Few, short, seeded runs: each costs a create, a few power changes and a delete (see the figure). */
const RUNS = 12;
const SEED = 20260513;
const MAX_UPDATES = 4;

/** One program, the scheduled shutdown in hours after the run's start (applied only while running). */
interface Program {
  title?: string;
  running: boolean;
  shutdownInHours?: 48 | 96;
  waitTimeoutSeconds: 300 | 900;
}

/** A step: the program `up` applies, then how long the clock moves before the next step. */
interface Step {
  program: Program;
  thenWaitSeconds: 0 | 60 | 3600;
}

const programs: fc.Arbitrary<Program> = fc
  .record({
    title: fc.option(fc.constantFrom("alpha", "beta"), { nil: undefined }),
    running: fc.boolean(),
    shutdownInHours: fc.option(fc.constantFrom<48 | 96>(48, 96), { nil: undefined }),
    waitTimeoutSeconds: fc.constantFrom<300 | 900>(300, 900),
  })
  // Check refuses a shutdown time for a stopped instance; a stopped program has none.
  .map((p) => (p.running ? p : { ...p, shutdownInHours: undefined }));

const steps: fc.Arbitrary<Step[]> = fc.array(
  fc.record({ program: programs, thenWaitSeconds: fc.constantFrom<0 | 60 | 3600>(0, 60, 3600) }),
  { minLength: 2, maxLength: 1 + MAX_UPDATES },
);

describe("Instance updates converge", () => {
  let w: World;
  beforeAll(async () => (w = await startWorld()));
  afterAll(() => w.stop());

  it("leaves nothing for `preview --refresh` to change after any sequence of ups", async () => {
    let ups = 0;
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(steps, async (sequence) => {
        await w.emu.admin("POST", "/reset");
        // Shutdown times stay days ahead of both clocks: the steps move the clock at most 4 h, and each up
        // runs under advancing(), which moves it 10 s every 10 ms for as long as a loaded machine takes.
        const base = Math.max(await w.emu.now(), Math.floor(Date.now() / 1000));
        const inputs = (p: Program): Props => ({
          ...w.spec,
          ...(p.title === undefined ? {} : { title: p.title }),
          running: p.running,
          ...(p.shutdownInHours === undefined ? {} : { shutdownAt: base + p.shutdownInHours * HOUR }),
          waitTimeoutSeconds: p.waitTimeoutSeconds,
        });
        let state: ResourceState | undefined;
        for (const { program, thenWaitSeconds } of sequence) {
          state = await w.advancing(upWithRefresh(state, inputs(program)));
          ups += 1;
          await w.h.expectNoDrift("Instance", state);
          await expectCloudAsProgrammed(state.id, program, base);
          await w.emu.advance(thenWaitSeconds);
        }
        await w.h.delete("Instance", state!);
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    reportFigure(
      "Instance convergence property",
      `${RUNS} runs, ${ups} ups, ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  }, 180_000);

  /** `pulumi up --refresh`: refresh, check against the refreshed inputs, diff, then create or update in place. */
  async function upWithRefresh(state: ResourceState | undefined, program: Props): Promise<ResourceState> {
    if (state === undefined) return w.h.create("Instance", await w.h.checked("Instance", program));
    const refreshed = await w.h.refresh("Instance", state);
    expect(refreshed.id).toBe(state.id);
    const news = await w.h.checked("Instance", program, refreshed.inputs);
    const diff = await w.h.diff("Instance", refreshed.id, refreshed.outputs, news);
    expect(diff.replaces).toEqual([]);
    return diff.changes === "none" ? { ...refreshed, inputs: news } : w.h.update("Instance", refreshed, news);
  }

  async function expectCloudAsProgrammed(uuid: string, program: Program, base: number): Promise<void> {
    const cloud = await w.api.instances.info(uuid);
    expect(cloud.status).toBe(program.running ? 2 : 22);
    if (program.title !== undefined) expect(cloud.title).toBe(program.title);
    const timer = cloud.shutdown_regular?.enable ? cloud.shutdown_regular.shutdown_time : undefined;
    const wanted = program.shutdownInHours === undefined ? undefined : base + program.shutdownInHours * HOUR;
    expect(timer).toBe(wanted);
  }
});
