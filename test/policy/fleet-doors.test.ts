/**
 * The cost guard policy pack the package ships, run by pulumi-gpucloud/testing as the engine runs it,
 * judging a Fleet through both front doors: in the dynamic door the program's Fleet component registers
 * its members itself; in the native door the plugin's Construct does. Either way the pack sees the Fleet
 * with its inputs before any member, then the members under it, then the whole stack.
 */
import { costGuardPolicyPack, type PolicyViolation } from "../../testing";
import { openFleet, plan, type FleetWorld } from "../fleet/helpers";
import { failureOf } from "../support/operations";

const BIG_MEMBER = "24.04 CNY/h (pod ComfyUI 0.2 + 5090 2.98 × 8)";
const SMALL_MEMBER = "2.08 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 1)";

/** Each violation as [policy, the resource's name or "stack"]. */
const where = (violations: PolicyViolation[]) =>
  violations.map((v) => [v.policy, v.urn?.split("::").pop() ?? "stack"]);

describe.each(["dynamic", "native"] as const)("the cost guard and a Fleet, through the %s door", (door) => {
  describe("a Fleet of 100 members of 8 5090s", () => {
    let w: FleetWorld;
    beforeAll(async () => {
      const pack = costGuardPolicyPack({
        "gpucloud-stack-hourly-budget": { maxHourlyCost: 50 },
        "gpucloud-instance-gpus": { maxGpusPerInstance: 4 },
        "gpucloud-stack-gpus": { maxGpusPerStack: 16 },
        "gpucloud-idle-shutdown": "disabled",
      });
      w = await openFleet(door, { size: 100, gpuNums: 8 }, { policyPacks: [pack] });
      await w.setArgs({ size: 100, gpuUuid: w.gpu5090, gpuNums: 8 });
    });
    afterAll(() => w?.close());

    it("fails the preview: the budget names the fleet, its members' price and basis and the total; the caps judge it once", async () => {
      const preview = await failureOf(w.stack.preview());
      expect(preview.message).toMatch(/^preview failed: mandatory policy violations:\n/);
      expect(where(preview.policyViolations)).toEqual([
        ["gpucloud-instance-hourly-price", "trainers"],
        ["gpucloud-instance-gpus", "trainers"],
        ["gpucloud-stack-hourly-budget", "stack"],
        ["gpucloud-stack-gpus", "stack"],
      ]);
      const [price, gpus, budget, stackGpus] = preview.policyViolations.map((v) => v.message);
      expect(budget).toContain(
        "The stack's 100 running instances would cost 2404 CNY/h, over maxHourlyCost 50 CNY/h. The most expensive:\n" +
          `  fleet "trainers": 100 members at ${BIG_MEMBER} = 2404 CNY/h\n`,
      );
      expect(price).toContain(
        `Fleet "trainers" (100 members) would have members over maxInstanceHourlyPrice 20 CNY/h: 100 members at ${BIG_MEMBER}.`,
      );
      expect(gpus).toContain(
        'Fleet "trainers" would give each of its 100 members 8 GPUs, over maxGpusPerInstance 4.',
      );
      expect(stackGpus).toContain(
        "The stack's 100 running instances would have 800 GPUs together, over maxGpusPerStack 16, among them " +
          'fleet "trainers": 100 members × 8 GPUs.',
      );
      expect(preview.policyViolations[0].urn).toBe(
        `urn:pulumi:${door}::fleet-test::gpucloud:index:Fleet::trainers`,
      );
    });

    it("stops an up with no preview at the Fleet itself: none of its members is created", async () => {
      await w.clearLog();
      const up = await failureOf(w.stack.up({ skipPreview: true }));
      expect(up.operation).toBe("up");
      expect(up.message).toContain(
        'Fleet "trainers" would take the stack\'s hourly cost to 2404 CNY/h, over maxHourlyCost 50 CNY/h, so the ' +
          "update stops before any of its 100 members is created or changed: 100 members at " +
          `${BIG_MEMBER} = 2404 CNY/h.`,
      );
      expect(new Set(up.policyViolations.map((v) => v.urn?.split("::").pop()))).toEqual(
        new Set(["trainers"]),
      );
      expect(up.steps.map((s) => s.name)).not.toContain("trainers-0");
      expect((await w.calls()).filter((c) => c.includes("/instance/create"))).toEqual([]);
      expect((await w.api.instances.list()).total).toBe(0);
    });
  });

  describe("a Fleet that fits, grown past the budget", () => {
    let w: FleetWorld;
    beforeAll(async () => {
      const pack = costGuardPolicyPack({ "gpucloud-stack-hourly-budget": { maxHourlyCost: 5 } });
      w = await openFleet(door, { size: 2, idlePeriodMinutes: 30 }, { policyPacks: [pack] });
    });
    afterAll(() => w?.close());

    it("comes up within budget, each member counted once", async () => {
      const up = await w.advancing(w.stack.up());
      expect(plan(up)).toMatchObject({ trainers: "create", "trainers-0": "create", "trainers-1": "create" });
      expect(up.policyViolations).toEqual([]);
    });

    it("is stopped whole when it grows past the budget with no preview: the members it has are untouched", async () => {
      const before = (await w.api.instances.list()).instance_list.map((i) => i.instance_uuid);
      await w.setArgs({ size: 3, idlePeriodMinutes: 30 });
      const up = await failureOf(w.advancing(w.stack.up({ skipPreview: true })));
      expect(up.message).toContain(
        'Fleet "trainers" would take the stack\'s hourly cost to 6.24 CNY/h, over maxHourlyCost 5 CNY/h, so the ' +
          `update stops before any of its 3 members is created or changed: 3 members at ${SMALL_MEMBER} = 6.24 CNY/h.`,
      );
      expect((await w.api.instances.list()).instance_list.map((i) => i.instance_uuid).sort()).toEqual(
        [...before].sort(),
      );
    });

    it("fails the preview of the grown fleet at the whole stack, the fleet on one line", async () => {
      const preview = await failureOf(w.stack.preview());
      expect(preview.policyViolations.map((v) => v.message)).toEqual([
        expect.stringContaining(
          "The stack's 3 running instances would cost 6.24 CNY/h, over maxHourlyCost 5 CNY/h. The most expensive:\n" +
            `  fleet "trainers": 3 members at ${SMALL_MEMBER} = 6.24 CNY/h\n`,
        ),
      ]);
    });

    it("counts its stopped members as nothing, found by the titles the provider gave them, and grows by a new one", async () => {
      await w.setArgs({ size: 2, idlePeriodMinutes: 30, running: false });
      await w.advancing(w.stack.up());
      await w.setArgs({ size: 3, idlePeriodMinutes: 30, running: false });
      const up = await w.advancing(w.stack.up({ skipPreview: true }));
      expect(plan(up)).toMatchObject({ "trainers-0": "same", "trainers-1": "same", "trainers-2": "create" });
      expect(up.policyViolations).toEqual([]);
      await w.advancing(w.stack.destroy());
    });
  });
});
