/**
 * The money policies of the cost guard against a real emulator's catalogue: the stack's hourly budget as
 * the engine shows it the whole stack (at the end of a preview, after an update) and each instance's price
 * cap, with the prices the data sources give (pod + GPU × gpuNums), unknowns at the most they may cost.
 */
import { instanceHourlyPrice, stackHourlyBudget } from "../../provider/policy";
import { KEY, useGuardCloud } from "./guard-cloud";
import {
  checkResource,
  checkStack,
  DYNAMIC,
  GPU_4090D,
  GPU_5090,
  instance,
  NATIVE,
  resource,
  UNKNOWN,
} from "./stack-view";

const REFUSED_KEY = "refused-key";
const cloud = useGuardCloud();

describe("gpucloud-stack-hourly-budget, the whole stack", () => {
  it("passes a stack whose instances cost at most maxHourlyCost", async () => {
    const fleet = [instance("a"), instance("b")];
    expect(await checkStack(stackHourlyBudget, fleet, { maxHourlyCost: 4.16 })).toEqual({ violations: [] });
  });

  it("fails one over it with the total and the five most expensive instances, priced pod + GPU × gpuNums", async () => {
    const fleet = [
      instance("small-0"),
      instance("big", { gpuUuid: GPU_5090, gpuNums: 8 }),
      instance("small-1"),
      instance("mid", { gpuNums: 4 }),
      instance("small-2"),
      instance("pair", { gpuNums: 2 }),
      instance("small-3"),
    ];
    const { violations } = await checkStack(stackHourlyBudget, fleet, { maxHourlyCost: 30 });
    // 24.04 + 7.72 + 3.96 + 4 × 2.08 = 44.04
    expect(violations).toEqual([
      {
        message:
          "The stack's 7 running instances would cost 44.04 CNY/h, over maxHourlyCost 30 CNY/h. The most expensive:\n" +
          "  big: 24.04 CNY/h (pod ComfyUI 0.2 + 5090 2.98 × 8)\n" +
          "  mid: 7.72 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 4)\n" +
          "  pair: 3.96 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 2)\n" +
          "  small-0: 2.08 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 1)\n" +
          "  small-1: 2.08 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 1)\n" +
          "  ... and 2 more\n" +
          "Run fewer or smaller instances, stop some that already exist (`running: false`), or raise maxHourlyCost in the policy pack config.",
      },
    ]);
  });

  it("counts an instance already made and declared stopped as nothing, and reads both type tokens", async () => {
    const stopped = instance(
      "off",
      { gpuUuid: GPU_5090, gpuNums: 8, running: false, instanceUuid: "ins-1" },
      NATIVE,
    );
    expect(await checkStack(stackHourlyBudget, [instance("on"), stopped], { maxHourlyCost: 2.08 })).toEqual({
      violations: [],
    });
  });

  it("counts an instance still to be made at its price even when declared running: false, and says why", async () => {
    const fresh = instance("fresh", { running: false });
    const { violations } = await checkStack(stackHourlyBudget, [instance("on"), fresh], { maxHourlyCost: 4 });
    expect(violations[0].message).toContain("would cost up to 4.16 CNY/h, over maxHourlyCost 4 CNY/h");
    expect(violations[0].message).toContain(
      "  fresh: 2.08 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 1; worst case: declared running: false, but the " +
        "cloud creates it running: it bills from its create until it is stopped, and the cloud takes its first " +
        "hour's price from the balance at create)",
    );
  });

  it("applies its default budget (50 CNY/h) when the pack config gives none", async () => {
    const fleet = Array.from({ length: 25 }, (_, i) => instance(`f${i}`));
    const { violations } = await checkStack(stackHourlyBudget, fleet);
    expect(violations[0].message).toMatch(/would cost 52 CNY\/h, over maxHourlyCost 50 CNY\/h/);
  });

  it("after an update, prices an instance by the model it got, not the dearest of its list", async () => {
    const made = instance("made", {
      instanceUuid: "ins-1",
      gpuUuid: GPU_4090D,
      fallbackGpuUuids: [GPU_5090],
      gpuNums: 8,
    });
    expect(await checkStack(stackHourlyBudget, [made], { maxHourlyCost: 15.24 }, "update")).toEqual({
      violations: [],
    });
  });

  describe("at preview, with values not known until up: each priced at the most it may cost", () => {
    it("an unknown gpuNums at 8, the most the cloud takes, and the message says so", async () => {
      const fleet = [instance("known"), instance("later", { gpuNums: UNKNOWN })];
      const { violations, cannotRun } = await checkStack(stackHourlyBudget, fleet, { maxHourlyCost: 10 });
      expect(cannotRun).toBeUndefined();
      expect(violations[0].message).toContain(
        "The stack's 2 running instances would cost up to 17.32 CNY/h, over maxHourlyCost 10 CNY/h; 1 of them priced " +
          "at the most they may cost (each says why). The most expensive:\n" +
          "  later: 15.24 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 8; worst case: gpuNums is not known until up: " +
          "priced at 8, the most the cloud takes)\n",
      );
    });

    it("an unknown gpuUuid at the dearest valid model, an unknown pod at the dearest pod, an unknown power state as running", async () => {
      const fleet = [
        instance("model", { gpuUuid: UNKNOWN }),
        instance("pod", { podUuid: UNKNOWN, gpuNums: 2 }),
        instance("maybe", { running: UNKNOWN }),
      ];
      const { violations } = await checkStack(stackHourlyBudget, fleet, { maxHourlyCost: 1 });
      expect(violations[0].message).toContain("would cost up to 9.22 CNY/h");
      expect(violations[0].message).toContain(
        "  model: 3.18 CNY/h (pod ComfyUI 0.2 + 5090 2.98 × 1; worst case: gpuUuid is not known until up: " +
          "priced at the dearest valid GPU model, 5090)",
      );
      expect(violations[0].message).toContain(
        "  pod: 3.96 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 2; worst case: podUuid is not known until up: " +
          "priced at the dearest pod, ComfyUI)",
      );
      expect(violations[0].message).toContain(
        "  maybe: 2.08 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 1; worst case: running is not known until up: counted as running)",
      );
    });

    it("passes a stack whose worst case is within budget: no 'cannot run during preview'", async () => {
      const fleet = [instance("known"), instance("later", { gpuNums: UNKNOWN })];
      expect(await checkStack(stackHourlyBudget, fleet, { maxHourlyCost: 17.32 })).toEqual({
        violations: [],
      });
    });
  });

  it("reports an instance it cannot price (a GPU model the catalogue lacks) instead of passing", async () => {
    const odd = instance("odd", { gpuUuid: "gpu-nowhere" });
    expect((await checkStack(stackHourlyBudget, [odd], { maxHourlyCost: 100 })).violations).toEqual([
      {
        message:
          '"odd" cannot be priced: its gpuUuid is not a GPU model of the cloud\'s catalogue. The hourly budget cannot be checked.',
        urn: odd.urn,
      },
    ]);
  });

  it("never shows a title, which may be secret (the SDK hands secrets to policies unwrapped)", async () => {
    const fleet = [instance("a", { title: "s3cr3t-title-a" }), instance("b", { title: "s3cr3t-title-b" })];
    const { violations } = await checkStack(stackHourlyBudget, fleet, { maxHourlyCost: 1 });
    expect(violations).toHaveLength(1);
    expect(JSON.stringify(violations)).not.toContain("s3cr3t");
  });

  it("reads the price lists once for a whole run, whatever the number of instances and policies, and no instance list it does not need", async () => {
    const fleet = Array.from({ length: 30 }, (_, i) => instance(`f${i}`));
    await Promise.all([
      checkStack(stackHourlyBudget, fleet),
      ...fleet.map((i) => checkResource(instanceHourlyPrice, i)),
      ...fleet.map((i) => checkResource(stackHourlyBudget, i)),
    ]);
    expect({
      gpus: await cloud.calls("/gpu/list"),
      pods: await cloud.calls("/pod/list"),
      instances: await cloud.calls("/instance/list"),
    }).toEqual({ gpus: 1, pods: 1, instances: 0 });
  });

  describe("when the prices cannot be had, a violation that says why, never a pass", () => {
    it("the catalogue is unreachable", async () => {
      cloud.stackConfig({ "gpucloud:baseUrl": "http://127.0.0.1:1", "gpucloud:apiKey": KEY });
      const { violations } = await checkStack(stackHourlyBudget, [instance("a")]);
      expect(violations).toHaveLength(1);
      expect(violations[0].message).toMatch(
        /^Could not check the hourly budget: the cloud's price list could not be read: .*127\.0\.0\.1:1.* The cost guard passes no stack it cannot price/s,
      );
    });

    it("the cloud refuses the key, and the message holds no key", async () => {
      cloud.stackConfig({ "gpucloud:baseUrl": cloud.emulator.url, "gpucloud:apiKey": REFUSED_KEY });
      const stack = await checkStack(stackHourlyBudget, [instance("a")]);
      const single = await checkResource(instanceHourlyPrice, instance("a"));
      expect(stack.violations[0].message).toMatch(
        /^Could not check the hourly budget: the cloud's price list/,
      );
      expect(single.violations[0].message).toMatch(
        /^Could not check the price of "a": the cloud's price list/,
      );
      expect(JSON.stringify([stack, single])).not.toContain(REFUSED_KEY);
    });

    it("no API key is set, naming both ways to set one", async () => {
      cloud.stackConfig({ "gpucloud:baseUrl": cloud.emulator.url });
      const saved = process.env.GPUCLOUD_API_KEY;
      delete process.env.GPUCLOUD_API_KEY;
      try {
        const { violations } = await checkStack(stackHourlyBudget, [instance("a")]);
        expect(violations[0].message).toContain("gpucloud:apiKey");
        expect(violations[0].message).toContain("GPUCLOUD_API_KEY");
      } finally {
        if (saved !== undefined) process.env.GPUCLOUD_API_KEY = saved;
      }
    });
  });
});

describe("gpucloud-instance-hourly-price", () => {
  it("fails an instance over maxInstanceHourlyPrice, with its price and how it is made", async () => {
    const big = instance("big", { gpuUuid: GPU_5090, gpuNums: 8 });
    expect(await checkResource(instanceHourlyPrice, big, { maxInstanceHourlyPrice: 20 })).toEqual({
      violations: [
        {
          message:
            '"big" would cost 24.04 CNY/h (pod ComfyUI 0.2 + 5090 2.98 × 8), over maxInstanceHourlyPrice 20 CNY/h. ' +
            "Choose a cheaper GPU model or fewer GPUs, or raise maxInstanceHourlyPrice in the policy pack config.",
        },
      ],
    });
  });

  it("passes one within it, one already made and declared stopped, and resources that are not instances", async () => {
    const cap = { maxInstanceHourlyPrice: 7.72 };
    expect(await checkResource(instanceHourlyPrice, instance("mid", { gpuNums: 4 }), cap)).toEqual({
      violations: [],
    });
    await cloud.instance("off", { gpuUuid: GPU_5090, gpuNums: 8 });
    const stopped = instance("off", { gpuUuid: GPU_5090, gpuNums: 8, running: false });
    expect(await checkResource(instanceHourlyPrice, stopped, cap)).toEqual({ violations: [] });
    const policy = resource(DYNAMIC, "IdleClosePolicy", "idle", { instanceUuid: "x", idlePeriodMinutes: 10 });
    expect(await checkResource(instanceHourlyPrice, policy, cap)).toEqual({ violations: [] });
  });

  it("at preview, prices an unknown GPU model at the dearest valid one and says so", async () => {
    const later = instance("later", { gpuUuid: UNKNOWN, gpuNums: 8 });
    expect(await checkResource(instanceHourlyPrice, later, {}, "preview")).toEqual({
      violations: [
        {
          message:
            '"later" would cost up to 24.04 CNY/h (pod ComfyUI 0.2 + 5090 2.98 × 8; worst case: gpuUuid is not known ' +
            "until up: priced at the dearest valid GPU model, 5090), over maxInstanceHourlyPrice 20 CNY/h. " +
            "Choose a cheaper GPU model or fewer GPUs, or raise maxInstanceHourlyPrice in the policy pack config.",
        },
      ],
    });
  });

  it("checks an instance whose power state is not known yet, or that is still to be made stopped, as one that bills", async () => {
    const maybeBig = instance("maybe-big", { running: UNKNOWN, gpuUuid: GPU_5090, gpuNums: 8 });
    const freshBig = instance("fresh-big", { running: false, gpuUuid: GPU_5090, gpuNums: 8 });
    const [maybe, fresh] = await Promise.all([
      checkResource(instanceHourlyPrice, maybeBig, {}, "preview"),
      checkResource(instanceHourlyPrice, freshBig, {}, "preview"),
    ]);
    expect(maybe.violations[0].message).toContain(
      "worst case: running is not known until up: counted as running",
    );
    expect(fresh.violations[0].message).toContain(
      "declared running: false, but the cloud creates it running",
    );
  });
});
