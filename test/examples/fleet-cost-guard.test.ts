/**
 * examples/fleet under the cost guard policy pack the package ships (policy-pack/), run by
 * pulumi-gpucloud/testing as `pulumi preview --policy-pack` runs it, through both front doors: a fleet
 * over budget fails at preview with the policy's message, before anything is rented; one within passes,
 * its preview showing the hourly cost the policy adds up; instances without an idle policy are reported;
 * a catalogue that is down is a violation, not a pass.
 */
import {
  costGuardPolicyPack,
  nativeFrontDoor,
  PolicyViolationError,
  type FrontDoorFactory,
} from "../../testing";
import { admin } from "../support/data-source-cloud";
import { failureOf } from "../support/operations";
import { openExample, plan, type ExampleRun } from "./helpers";

const BUDGET = { "gpucloud-stack-hourly-budget": { maxHourlyCost: 5 } };
const FLEET = { "fleet:podTitle": "ComfyUI", "fleet:gpuModel": "4090D", "fleet:idleMinutes": "120" };

/** The example, opened with the cost guard and a budget of 5 CNY/h; two instances of 2.08 CNY/h fit in it. */
function openGuarded(frontDoor?: FrontDoorFactory): Promise<ExampleRun> {
  return openExample(
    "fleet",
    { ...FLEET, "fleet:count": "2" },
    { frontDoor, policyPacks: [costGuardPolicyPack(BUDGET)] },
  );
}

describe.each<[string, FrontDoorFactory | undefined]>([
  ["dynamic providers", undefined],
  ["the native plugin", nativeFrontDoor()],
])("examples/fleet under the cost guard, through %s", (_door, frontDoor) => {
  let run: ExampleRun;
  beforeAll(async () => {
    run = await openGuarded(frontDoor);
  });
  afterAll(() => run.close());

  it("fails a preview over budget with the total and the most expensive instances", async () => {
    await run.stack.setConfig({ ...run.config, "fleet:count": "3" });
    const preview = await failureOf(run.stack.preview());
    // The same figures as the fleet's hourlyPrice output: 3 × 2.08.
    expect(preview.policyViolations[0].message).toContain(
      "The stack's 3 running instances would cost 6.24 CNY/h, over maxHourlyCost 5 CNY/h. The most expensive:\n" +
        "  fleet-0: 2.08 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 1)\n" +
        "  fleet-1: 2.08 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 1)\n" +
        "  fleet-2: 2.08 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 1)\n",
    );
    expect(preview.message).toMatch(/^preview failed: mandatory policy violations:\n/);
    expect(preview.failures).toEqual([expect.any(PolicyViolationError)]);
    expect(preview.policyViolations.map((v) => [v.policy, v.enforcementLevel, v.urn])).toEqual([
      ["gpucloud-stack-hourly-budget", "mandatory", undefined],
    ]);
  });

  it("reports each instance that nothing stops when idle, and lets the preview pass (advisory)", async () => {
    await run.stack.setConfig({ ...run.config, "fleet:idlePolicy": "false" });
    const preview = await run.stack.preview();
    const reported = preview.policyViolations.map((v) => [
      v.policy,
      v.enforcementLevel,
      v.urn?.split("::").pop(),
    ]);
    expect(reported).toEqual([
      ["gpucloud-idle-shutdown", "advisory", "fleet-0"],
      ["gpucloud-idle-shutdown", "advisory", "fleet-1"],
    ]);
    expect(preview.policyViolations[0].message).toContain('"fleet-0" would run with no IdleClosePolicy');
  });
});

describe("examples/fleet under the cost guard: up, and a catalogue that is down", () => {
  let run: ExampleRun;
  beforeAll(async () => {
    run = await openGuarded();
  });
  afterAll(() => run.close());

  it("stops an up over budget before it rents anything", async () => {
    await run.stack.setConfig({ ...run.config, "fleet:count": "3" });
    const up = await failureOf(run.stack.up());
    expect(up.operation).toBe("up");
    expect(up.message).toContain("would cost 6.24 CNY/h, over maxHourlyCost 5 CNY/h");
    expect(run.stack.current.resources).toEqual([]);
    expect((await run.api.instances.list()).total).toBe(0);
  });

  it("fails, not passes, a preview while the cloud's catalogue is down", async () => {
    await run.stack.setConfig(run.config);
    const preview = await run.stack.preview();
    expect(preview.policyViolations).toEqual([]);
    expect(preview.outputs.hourlyPrice).toMatchObject({ fleet: 4.16, perInstance: 2.08, currency: "CNY" });
    // The program's own GPU and pod lookups are cached in this process from that preview; the pack,
    // started anew for each run, reads the catalogue itself.
    await admin(run.emulator, "POST", "/faults", { path: "/gpu/list", kind: "http_503", count: 100 });
    try {
      const down = await failureOf(run.stack.preview());
      const budget = down.policyViolations.find((v) => v.policy === "gpucloud-stack-hourly-budget");
      expect(budget?.message).toContain(
        "Could not check the hourly budget: the cloud's price list could not be read: Could not list GPU models: " +
          "the service failed: service unavailable",
      );
      expect(budget?.message).toContain("The cost guard passes no stack it cannot price");
      expect(budget?.enforcementLevel).toBe("mandatory");
    } finally {
      await admin(run.emulator, "DELETE", "/faults");
    }
  });

  it("comes up within budget, the policies passing on what up made, and is destroyed", async () => {
    const up = await run.stack.up();
    expect(plan(up)).toEqual({
      "fleet-0": "create",
      "fleet-1": "create",
      "fleet-0-idle": "create",
      "fleet-1-idle": "create",
    });
    // After up the idle policies name their instances by uuid: no false "no IdleClosePolicy".
    expect(up.policyViolations).toEqual([]);
    await run.stack.destroy();
    expect((await run.api.instances.list()).total).toBe(0);
  });
});
