/**
 * The cost guard and Fleets: the engine shows a policy pack a Fleet with its inputs before any of its
 * members exists, then each member (an Instance whose parent is the Fleet), then the whole stack with the
 * members and the Fleet's outputs. The budget counts every member once, wherever it sits; a Fleet over the
 * budget or a cap is stopped before any member is made, in one violation that names it.
 */
import { instanceGpus, instanceHourlyPrice, stackGpus, stackHourlyBudget } from "../../provider/policy";
import { useGuardCloud } from "./guard-cloud";
import {
  checkResource,
  checkStack,
  fleet,
  GPU_4090D,
  GPU_5090,
  instance,
  member,
  members,
  memberTitle,
  NATIVE,
  resource,
  UNKNOWN,
} from "./stack-view";

const cloud = useGuardCloud();

/** A Fleet of 100 members of 8 5090s each: 0.2 + 2.98 × 8 = 24.04 CNY/h a member. */
const BIG = { gpuUuid: GPU_5090, gpuNums: 8 };
const BIG_MEMBER = "24.04 CNY/h (pod ComfyUI 0.2 + 5090 2.98 × 8)";
const SMALL_MEMBER = "2.08 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 1)";

const admitted = (outcome: { violations: unknown[] }) => outcome.violations.length === 0;

/** A Fleet as the whole-stack check sees it: its outputs, which hold no spec (and a price it must not add). */
const fleetOutputs = (name: string) =>
  resource(NATIVE, "Fleet", name, { instanceUuids: [], serverUrls: [], hourlyPrice: 2404 });

describe("the whole stack, at the end of a preview: a fleet's members counted once, under their fleet", () => {
  it("fails 100 × 8 × 5090 naming the fleet, its members' price and basis, and the total", async () => {
    const big = fleet("big", 100, BIG);
    const stack = [fleetOutputs("big"), ...members(big), instance("solo")];
    const { violations } = await checkStack(stackHourlyBudget, stack, { maxHourlyCost: 50 });
    expect(violations).toEqual([
      {
        message:
          "The stack's 101 running instances would cost 2406.08 CNY/h, over maxHourlyCost 50 CNY/h. The most expensive:\n" +
          `  fleet "big": 100 members at ${BIG_MEMBER} = 2404 CNY/h\n` +
          `  solo: ${SMALL_MEMBER}\n` +
          "Run fewer or smaller instances, stop some that already exist (`running: false`), or raise maxHourlyCost in the policy pack config.",
      },
    ]);
  });

  it("counts the members and never the Fleet, whose hourlyPrice output is the members' price again", async () => {
    const small = fleet("small", 2);
    const stack = [fleetOutputs("small"), ...members(small)];
    expect(await checkStack(stackHourlyBudget, stack, { maxHourlyCost: 4.16 })).toEqual({ violations: [] });
  });

  it("prices members not known until up at the most they may cost, and says so", async () => {
    const later = fleet("later", 2, { gpuNums: UNKNOWN });
    const { violations } = await checkStack(stackHourlyBudget, members(later), { maxHourlyCost: 20 });
    expect(violations[0].message).toContain(
      "would cost up to 30.48 CNY/h, over maxHourlyCost 20 CNY/h; 2 of them priced at the most they may cost",
    );
    expect(violations[0].message).toContain(
      '  fleet "later": 2 members at 15.24 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 8; worst case: gpuNums is ' +
        "not known until up: priced at 8, the most the cloud takes) = 30.48 CNY/h",
    );
  });

  it("lists a fleet's members alike together and apart where they differ (made, stopped, new)", async () => {
    const mixed = fleet("mixed", 3, { running: false });
    const stack = [
      member(mixed, 0, { instanceUuid: "ins-0" }),
      member(mixed, 1),
      member(mixed, 2, { running: true, gpuNums: 2, instanceUuid: "ins-2" }),
    ];
    const { violations } = await checkStack(stackHourlyBudget, stack, { maxHourlyCost: 1 });
    expect(violations[0].message).toContain(
      '  fleet "mixed": 1 member at 3.96 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 2), 1 at 2.08 CNY/h (pod ' +
        "ComfyUI 0.2 + 4090D 1.88 × 1; worst case: declared running: false, but the cloud creates it running",
    );
  });

  it("finds the members of a fleet that sits inside another component, and groups fleets apart", async () => {
    const outer = resource("my:app:", "Training", "training", {});
    const inner = fleet("trainers", 2, {}, outer);
    const other = fleet("trainers", 1, BIG);
    const stack = [outer, ...members(inner), ...members(other)];
    expect(members(inner)[0].urn).toBe(
      "urn:pulumi:test::p::my:app:Training$gpucloud:index:Fleet$pulumi-nodejs:dynamic/gpucloud:Instance::trainers-0",
    );
    const { violations } = await checkStack(stackHourlyBudget, stack, { maxHourlyCost: 20 });
    expect(violations[0].message).toContain(
      "The stack's 3 running instances would cost 28.2 CNY/h, over maxHourlyCost 20 CNY/h. The most expensive:\n" +
        `  fleet "trainers": 1 member at ${BIG_MEMBER} = 24.04 CNY/h\n` +
        `  fleet "trainers": 2 members at ${SMALL_MEMBER} = 4.16 CNY/h\n`,
    );
  });
});

describe("the running total in an update: a Fleet comes before its members", () => {
  it("stops a Fleet over the budget before any member, naming it, its size, each member's price and the total", async () => {
    const budget = { maxHourlyCost: 50 };
    expect(await checkResource(stackHourlyBudget, instance("solo"), budget)).toEqual({ violations: [] });
    const { violations } = await checkResource(stackHourlyBudget, fleet("big", 100, BIG), budget);
    expect(violations).toEqual([
      {
        message:
          'Fleet "big" would take the stack\'s hourly cost to 2406.08 CNY/h, over maxHourlyCost 50 CNY/h, so the ' +
          "update stops before any of its 100 members is created or changed: 100 members at " +
          `${BIG_MEMBER} = 2404 CNY/h. Counted in this update before it: 2.08 CNY/h\n` +
          `  solo: ${SMALL_MEMBER}\n` +
          "Run fewer or smaller instances, stop some that already exist (`running: false`), or raise maxHourlyCost in the policy pack config.",
      },
    ]);
    // Nothing of the stopped fleet is counted: what still fits is let through.
    const rest = Array.from({ length: 22 }, (_, i) => instance(`rest-${i}`));
    const outcomes = await Promise.all(rest.map((r) => checkResource(stackHourlyBudget, r, budget)));
    expect(outcomes.filter(admitted)).toHaveLength(22);
  });

  it("counts a Fleet's members with it, and each member once when it comes in its own right", async () => {
    const budget = { maxHourlyCost: 8.32 };
    const trainers = fleet("trainers", 3);
    expect(await checkResource(stackHourlyBudget, trainers, budget)).toEqual({ violations: [] });
    const outcomes = await Promise.all(
      members(trainers).map((m) => checkResource(stackHourlyBudget, m, budget)),
    );
    expect(outcomes.every(admitted)).toBe(true);
    expect(await checkResource(stackHourlyBudget, instance("fourth"), budget)).toEqual({ violations: [] });
    const fifth = await checkResource(stackHourlyBudget, instance("fifth"), budget);
    expect(fifth.violations[0].message).toContain(
      "Counted in this update before it: 8.32 CNY/h\n" +
        `  fleet "trainers": 3 members at ${SMALL_MEMBER} = 6.24 CNY/h\n` +
        `  fourth: ${SMALL_MEMBER}\n`,
    );
  });

  it("lets one of two fleets through when the budget holds one, and stops the other whole", async () => {
    const budget = { maxHourlyCost: 40 };
    const [a, b] = await Promise.all(
      ["a", "b"].map((name) => checkResource(stackHourlyBudget, fleet(name, 10), budget)),
    );
    expect([a, b].filter(admitted)).toHaveLength(1);
    const stopped = admitted(a) ? b : a;
    expect(stopped.violations[0].message).toMatch(
      /would take the stack's hourly cost to 41.6 CNY\/h, .* 10 members is created or changed: 10 members at 2.08 CNY\/h/,
    );
  });

  it("counts a stopped fleet's members the cloud holds as nothing, and its new members at their price", async () => {
    const parked = fleet("parked", 3, { ...BIG, running: false });
    await cloud.instance(memberTitle("parked", 0), { gpuUuid: GPU_5090, gpuNums: 8 });
    await cloud.instance(memberTitle("parked", 1), { gpuUuid: GPU_5090, gpuNums: 8 });
    // Another fleet's member, and an instance titled like a member but not by the provider: not this fleet's.
    await cloud.instance(memberTitle("parked-1", 0), { gpuUuid: GPU_5090, gpuNums: 8 });
    await cloud.instance("parked-2-by-hand", { gpuUuid: GPU_5090, gpuNums: 8 });
    const { violations } = await checkResource(stackHourlyBudget, parked, { maxHourlyCost: 24 });
    expect(violations[0].message).toContain(
      "so the update stops before any of its 3 members is created or changed: 1 member at 24.04 CNY/h (pod " +
        "ComfyUI 0.2 + 5090 2.98 × 8; worst case: declared running: false, but the cloud creates it running",
    );
    expect(await checkResource(stackHourlyBudget, parked, { maxHourlyCost: 24.04 })).toEqual({
      violations: [],
    });
  });

  it("counts a fleet's members the cloud holds at the model they run on, new ones at the dearest of the list", async () => {
    const listed = fleet("listed", 2, { gpuUuid: GPU_5090, fallbackGpuUuids: [GPU_4090D], gpuNums: 8 });
    await cloud.instance(memberTitle("listed", 0), { gpuUuid: GPU_4090D, gpuNums: 8 });
    const { violations } = await checkResource(stackHourlyBudget, listed, { maxHourlyCost: 30 });
    expect(violations[0].message).toContain(
      "members is created or changed: 1 member at 24.04 CNY/h (pod ComfyUI 0.2 + 5090 2.98 × 8; worst case: " +
        "fallbackGpuUuids: the model is chosen at create, so priced at the dearest of the list, 5090), 1 at " +
        "15.24 CNY/h (pod ComfyUI 0.2 + 4090D 1.88 × 8) = 39.28 CNY/h",
    );
  });

  it("takes back a member's place when the member itself counts nothing", async () => {
    const budget = { maxHourlyCost: 4.16 };
    // A title the fleet does not take for its member 0's: the member's own check finds it made by it.
    await cloud.instance("kept");
    const parked = fleet("parked", 2, { running: false });
    expect(await checkResource(stackHourlyBudget, parked, budget)).toEqual({ violations: [] });
    const made = member(parked, 0, { title: "kept" });
    expect(await checkResource(stackHourlyBudget, made, budget)).toEqual({ violations: [] });
    expect(await checkResource(stackHourlyBudget, instance("fits"), budget)).toEqual({ violations: [] });
  });

  it("counts the members one by one when the engine was not shown the Fleet's inputs", async () => {
    const budget = { maxHourlyCost: 4.16 };
    const bare = resource(NATIVE, "Fleet", "bare", {});
    expect(await checkResource(stackHourlyBudget, bare, budget)).toEqual({ violations: [] });
    const outcomes = [];
    for (const m of members(fleet("bare", 3)))
      outcomes.push(await checkResource(stackHourlyBudget, m, budget));
    expect(outcomes.map(admitted)).toEqual([true, true, false]);
  });

  it("stops a Fleet it cannot price before any member is made", async () => {
    const odd = fleet("odd", 2, { gpuUuid: "gpu-nowhere" });
    expect((await checkResource(stackHourlyBudget, odd)).violations[0].message).toBe(
      'Fleet "odd": "odd-0" cannot be priced: its gpuUuid is not a GPU model of the cloud\'s catalogue. The ' +
        "hourly budget cannot be checked, so the update stops before any of its members is made.",
    );
  });

  it("leaves a preview's Fleet to the whole-stack check: nothing reported, nothing counted", async () => {
    const big = fleet("big", 100, BIG);
    expect(await checkResource(stackHourlyBudget, big, { maxHourlyCost: 1 }, "preview")).toEqual({
      violations: [],
    });
    expect(await checkResource(stackHourlyBudget, instance("small"), { maxHourlyCost: 2.08 })).toEqual({
      violations: [],
    });
  });
});

describe("the per-instance caps on a Fleet's members, judged on the Fleet", () => {
  it("reports a fleet whose members cost over maxInstanceHourlyPrice once, and not its members again", async () => {
    const cap = { maxInstanceHourlyPrice: 20 };
    const big = fleet("big", 100, BIG);
    expect(await checkResource(instanceHourlyPrice, big, cap, "preview")).toEqual({
      violations: [
        {
          message:
            `Fleet "big" (100 members) would have members over maxInstanceHourlyPrice 20 CNY/h: 100 members at ` +
            `${BIG_MEMBER}. Choose a cheaper GPU model or fewer GPUs, or raise maxInstanceHourlyPrice in the policy ` +
            "pack config.",
        },
      ],
    });
    expect(await checkResource(instanceHourlyPrice, member(big, 0), cap, "preview")).toEqual({
      violations: [],
    });
    // Another fleet's members are judged themselves.
    const alone = member(fleet("other", 1, BIG), 0);
    expect((await checkResource(instanceHourlyPrice, alone, cap)).violations).toHaveLength(1);
  });

  it("judges each member itself when its fleet passed", async () => {
    const cap = { maxInstanceHourlyPrice: 2.08 };
    const small = fleet("small", 2);
    expect(await checkResource(instanceHourlyPrice, small, cap)).toEqual({ violations: [] });
    const grown = await checkResource(instanceHourlyPrice, member(small, 1, { gpuNums: 2 }), cap);
    expect(grown.violations[0].message).toMatch(/^"small-1" would cost 3.96 CNY\/h/);
  });

  it("reports a fleet whose members have more GPUs than maxGpusPerInstance once, naming its size", async () => {
    const cap = { maxGpusPerInstance: 4 };
    const big = fleet("big", 100, BIG);
    expect(await checkResource(instanceGpus, big, cap)).toEqual({
      violations: [
        { message: 'Fleet "big" would give each of its 100 members 8 GPUs, over maxGpusPerInstance 4.' },
      ],
    });
    expect(await checkResource(instanceGpus, member(big, 7), cap)).toEqual({ violations: [] });
    expect(await checkResource(instanceGpus, fleet("parked", 2, { ...BIG, running: false }), cap)).toEqual({
      violations: [],
    });
  });

  it("cannot judge a fleet's GPU count at preview while it is not known", async () => {
    expect(await checkResource(instanceGpus, fleet("later", 2, { gpuNums: UNKNOWN }), {}, "preview")).toEqual(
      {
        violations: [],
        cannotRun: "string value at .gpuNums can't be known during preview",
      },
    );
  });
});

describe("gpucloud-stack-gpus with fleets", () => {
  it("counts every member of every fleet with the other instances, and names the fleets", async () => {
    const big = fleet("big", 100, BIG);
    const stack = [fleetOutputs("big"), ...members(big), instance("solo", { gpuNums: 4 })];
    expect(await checkStack(stackGpus, stack, { maxGpusPerStack: 16 })).toEqual({
      violations: [
        {
          message:
            "The stack's 101 running instances would have 804 GPUs together, over maxGpusPerStack 16, among them " +
            'fleet "big": 100 members × 8 GPUs. Check the instance count and gpuNums, or raise maxGpusPerStack in ' +
            "the policy pack config.",
        },
      ],
    });
  });
});
