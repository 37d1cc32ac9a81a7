/**
 * The money policies of the cost guard against a real emulator's catalogue: the stack's hourly budget
 * and each instance's price cap, with the prices the data sources give (pod + GPU × gpuNums).
 */
import * as pulumi from "@pulumi/pulumi";
import { startEmulator, type RunningEmulator } from "pulumi-gpucloud/emulator";
import { clearCatalogueCache } from "../../provider/datasources/catalogue-cache";
import { instanceHourlyPrice, stackHourlyBudget } from "../../provider/policy";
import { requests } from "../support/data-source-cloud";
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

const KEY = "policy-key";
const REFUSED_KEY = "refused-key";
const COUNTED_KEY = "counted-key";

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator({
    port: 0,
    timeScale: 0,
    apiKeys: [`u:${KEY}`, `r:${REFUSED_KEY}`, `c:${COUNTED_KEY}`],
  });
});
afterAll(() => emulator.close());
beforeEach(() => stackConfig({ "gpucloud:baseUrl": emulator.url, "gpucloud:apiKey": KEY }));

/** The stack config a policy pack reads (under the CLI, from PULUMI_CONFIG). */
function stackConfig(config: Record<string, string>): void {
  pulumi.runtime.setAllConfig(config, ["gpucloud:apiKey"]);
}

const requestsTo = async (endpoint: string) => (await requests(emulator, endpoint)).length;

describe("gpucloud-stack-hourly-budget", () => {
  it("passes a stack whose running instances cost at most maxHourlyCost", async () => {
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
          "Run fewer or smaller instances, declare some `running: false`, or raise maxHourlyCost in the policy pack config.",
      },
    ]);
  });

  it("counts instances declared running: false as nothing", async () => {
    const fleet = [instance("on"), instance("off", { gpuUuid: GPU_5090, gpuNums: 8, running: false })];
    expect(await checkStack(stackHourlyBudget, fleet, { maxHourlyCost: 2.08 })).toEqual({ violations: [] });
  });

  it("prices an instance from an image by its GPUs alone, and reads both type tokens", async () => {
    const fromImage = instance("img", { podUuid: undefined, imageUuid: "img-1", gpuNums: 2 }, NATIVE);
    const { violations } = await checkStack(stackHourlyBudget, [fromImage, instance("pod")], {
      maxHourlyCost: 5,
    });
    expect(violations[0].message).toContain("would cost 5.84 CNY/h");
    expect(violations[0].message).toContain("  img: 3.76 CNY/h (image + 4090D 1.88 × 2)\n");
  });

  it("applies its default budget (50 CNY/h) when the pack config gives none", async () => {
    const fleet = Array.from({ length: 25 }, (_, i) => instance(`f${i}`));
    const { violations } = await checkStack(stackHourlyBudget, fleet);
    expect(violations[0].message).toMatch(/would cost 52 CNY\/h, over maxHourlyCost 50 CNY\/h/);
  });

  describe("at preview, with values not known until up", () => {
    it("cannot run when the known instances are within budget: the unknown one could break it", async () => {
      const fleet = [instance("known"), instance("later", { gpuNums: UNKNOWN })];
      expect(await checkStack(stackHourlyBudget, fleet, { maxHourlyCost: 10 })).toEqual({
        violations: [],
        cannotRun: "string value at .gpuNums can't be known during preview",
      });
    });

    it("fails when the known instances alone are over budget, saying the rest would add to it", async () => {
      const fleet = [
        instance("known", { gpuNums: 8 }),
        instance("later", { gpuUuid: UNKNOWN }),
        instance("maybe", { running: UNKNOWN }),
      ];
      const { violations, cannotRun } = await checkStack(stackHourlyBudget, fleet, { maxHourlyCost: 10 });
      expect(cannotRun).toBeUndefined();
      expect(violations[0].message).toMatch(
        /^The stack's 1 running instances would cost at least 15.24 CNY\/h \(2 more whose price is not known until up would add to it\), over maxHourlyCost 10 CNY\/h/,
      );
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

  it("reads the price lists once for a whole run, whatever the number of instances and policies", async () => {
    // A key of its own: the price lists other tests read are not this run's.
    stackConfig({ "gpucloud:baseUrl": emulator.url, "gpucloud:apiKey": COUNTED_KEY });
    clearCatalogueCache();
    await fetch(`${emulator.url}/_emulator/requests`, { method: "DELETE" });
    const fleet = Array.from({ length: 30 }, (_, i) => instance(`f${i}`));
    await Promise.all([
      checkStack(stackHourlyBudget, fleet),
      ...fleet.map((i) => checkResource(instanceHourlyPrice, i)),
    ]);
    expect({ gpus: await requestsTo("/gpu/list"), pods: await requestsTo("/pod/list") }).toEqual({
      gpus: 1,
      pods: 1,
    });
  });

  describe("when the prices cannot be had, a violation that says why, never a pass", () => {
    it("the catalogue is unreachable", async () => {
      const { violations } = await checkStack(stackHourlyBudget, [instance("a")], {
        baseUrl: "http://127.0.0.1:1",
      });
      expect(violations).toHaveLength(1);
      expect(violations[0].message).toMatch(
        /^Could not check the hourly budget: the cloud's price list could not be read: .*127\.0\.0\.1:1.* The cost guard passes no stack it cannot price/s,
      );
    });

    it("the cloud refuses the key, and the message holds no key", async () => {
      stackConfig({ "gpucloud:baseUrl": emulator.url, "gpucloud:apiKey": REFUSED_KEY });
      await fetch(`${emulator.url}/_emulator/keys/${REFUSED_KEY}/disable`, { method: "POST" });
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
      stackConfig({ "gpucloud:baseUrl": emulator.url });
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

  it("passes one within it, one declared stopped, and resources that are not instances", async () => {
    const cap = { maxInstanceHourlyPrice: 7.72 };
    expect(await checkResource(instanceHourlyPrice, instance("mid", { gpuNums: 4 }), cap)).toEqual({
      violations: [],
    });
    const stopped = instance("off", { gpuUuid: GPU_5090, gpuNums: 8, running: false });
    expect(await checkResource(instanceHourlyPrice, stopped, cap)).toEqual({ violations: [] });
    const policy = resource(DYNAMIC, "IdleClosePolicy", "idle", { instanceUuid: "x", idlePeriodMinutes: 10 });
    expect(await checkResource(instanceHourlyPrice, policy, cap)).toEqual({ violations: [] });
  });

  it("cannot run at preview while the instance's GPU is not known", async () => {
    const later = instance("later", { gpuUuid: UNKNOWN, gpuNums: 8 });
    expect(await checkResource(instanceHourlyPrice, later)).toEqual({
      violations: [],
      cannotRun: "string value at .gpuUuid can't be known during preview",
    });
  });

  it("with a power state not known yet: passes within the cap, cannot run over it", async () => {
    const maybe = instance("maybe", { running: UNKNOWN, gpuUuid: GPU_4090D });
    expect(await checkResource(instanceHourlyPrice, maybe)).toEqual({ violations: [] });
    const maybeBig = instance("maybe-big", { running: UNKNOWN, gpuUuid: GPU_5090, gpuNums: 8 });
    expect((await checkResource(instanceHourlyPrice, maybeBig)).cannotRun).toBe(
      "string value at .running can't be known during preview",
    );
  });
});
