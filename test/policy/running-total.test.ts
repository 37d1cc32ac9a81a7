/**
 * gpucloud-stack-hourly-budget before each instance of an update: the engine shows a resource policy each
 * resource's inputs before it creates or changes it, so the run's running total stops the instance that
 * would take the stack over budget before anything is made for it, however the engine orders or overlaps
 * its analyses.
 */
import { stackHourlyBudget } from "../../provider/policy";
import { useGuardCloud } from "./guard-cloud";
import { checkResource, GPU_4090D, GPU_5090, instance, UNKNOWN } from "./stack-view";

const cloud = useGuardCloud();

const admitted = (outcome: { violations: unknown[] }) => outcome.violations.length === 0;

describe("gpucloud-stack-hourly-budget, each instance before the update makes it", () => {
  it("counts each instance in turn and stops the one that would cross the budget, saying what was counted", async () => {
    const budget = { maxHourlyCost: 20 };
    const lead = await checkResource(stackHourlyBudget, instance("lead", { gpuNums: 8 }), budget);
    const small = await checkResource(stackHourlyBudget, instance("small"), budget);
    const follower = await checkResource(stackHourlyBudget, instance("follower-0", { gpuNums: 8 }), budget);
    expect([lead, small].every(admitted)).toBe(true);
    expect(follower.violations).toEqual([
      {
        message:
          '"follower-0" would take the stack\'s hourly cost to 32.56 CNY/h, over maxHourlyCost 20 CNY/h, so the ' +
          'update stops before "follower-0" is created or changed. Counted in this update before it: 17.32 CNY/h\n' +
          "  lead: 15.24 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 8)\n" +
          "  small: 2.08 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 1)\n" +
          '  "follower-0": 15.24 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 8)\n' +
          "Run fewer or smaller instances, stop some that already exist (`running: false`), or raise maxHourlyCost in the policy pack config.",
      },
    ]);
    // What it stopped is not counted: one that still fits is let through.
    expect(await checkResource(stackHourlyBudget, instance("fits"), budget)).toEqual({ violations: [] });
  });

  it("lets exactly as many through as the budget holds when the analyses overlap", async () => {
    // 2.08 CNY/h each: 10.4 holds five of the twelve, whichever five come first.
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        checkResource(stackHourlyBudget, instance(`f${i}`), { maxHourlyCost: 10.4 }),
      ),
    );
    expect(outcomes.filter(admitted)).toHaveLength(5);
    const totals = outcomes
      .filter((o) => !admitted(o))
      .map((o) => o.violations[0].message.match(/hourly cost to ([\d.]+) CNY\/h/)![1]);
    expect(new Set(totals)).toEqual(new Set(["12.48"]));
  });

  it("counts an instance the engine shows twice once", async () => {
    const budget = { maxHourlyCost: 2.08 };
    expect(await checkResource(stackHourlyBudget, instance("once"), budget)).toEqual({ violations: [] });
    expect(await checkResource(stackHourlyBudget, instance("once"), budget)).toEqual({ violations: [] });
  });

  it("leaves a preview to the whole-stack check: nothing reported, nothing counted", async () => {
    const big = instance("big", { gpuNums: UNKNOWN });
    expect(await checkResource(stackHourlyBudget, big, { maxHourlyCost: 1 }, "preview")).toEqual({
      violations: [],
    });
    expect(await checkResource(stackHourlyBudget, instance("small"), { maxHourlyCost: 2.08 })).toEqual({
      violations: [],
    });
  });

  it("stops an instance it cannot price before it is made", async () => {
    const odd = instance("odd", { gpuUuid: "gpu-nowhere" });
    expect((await checkResource(stackHourlyBudget, odd)).violations[0].message).toBe(
      '"odd" cannot be priced: its gpuUuid is not a GPU model of the cloud\'s catalogue. The hourly budget ' +
        "cannot be checked, so the update stops before it.",
    );
  });

  describe("what already exists, read from the cloud by the instance's title (its owner's mark)", () => {
    it("prices an instance with fallbacks at the model it runs on, and a new one at the dearest of its list", async () => {
      await cloud.instance("made", { gpuUuid: GPU_4090D, gpuNums: 8 });
      const spec = { gpuUuid: GPU_5090, fallbackGpuUuids: [GPU_4090D], gpuNums: 8 };
      const budget = { maxHourlyCost: 24.04 };
      expect(await checkResource(stackHourlyBudget, instance("made", spec), budget)).toEqual({
        violations: [],
      });
      const fresh = await checkResource(stackHourlyBudget, instance("fresh", spec), budget);
      expect(fresh.violations[0].message).toContain(
        '  "fresh": 24.04 CNY/h (pod ComfyUI 0.2 + 5090 2.98 × 8; worst case: fallbackGpuUuids: the model is ' +
          "chosen at create, so priced at the dearest of the list, 5090)",
      );
      expect(fresh.violations[0].message).toContain("update before it: 15.24 CNY/h\n  made: 15.24 CNY/h");
    });

    it("counts nothing for one declared stopped, and a new one declared stopped at its price", async () => {
      await cloud.instance("parked", { gpuUuid: GPU_5090, gpuNums: 8 });
      const budget = { maxHourlyCost: 2.08 };
      const parked = instance("parked", { gpuUuid: GPU_5090, gpuNums: 8, running: false });
      expect(await checkResource(stackHourlyBudget, parked, budget)).toEqual({ violations: [] });
      expect(await checkResource(stackHourlyBudget, instance("on"), budget)).toEqual({ violations: [] });
      const fresh = await checkResource(stackHourlyBudget, instance("fresh", { running: false }), budget);
      expect(fresh.violations[0].message).toContain(
        '"fresh" would take the stack\'s hourly cost to 4.16 CNY/h',
      );
    });

    it("takes an instance of the same title but another GPU count for a replacement: a new instance", async () => {
      await cloud.instance("grown", { gpuUuid: GPU_4090D, gpuNums: 1 });
      const grown = instance("grown", { gpuUuid: GPU_4090D, fallbackGpuUuids: [GPU_5090], gpuNums: 2 });
      const { violations } = await checkResource(stackHourlyBudget, grown, { maxHourlyCost: 5 });
      expect(violations[0].message).toContain("hourly cost to 6.16 CNY/h");
    });
  });
});
