/** The cost guard's GPU count caps, per instance and per stack: no catalogue needed. */
import { instanceGpus, stackGpus } from "../../provider/policy";
import { checkResource, checkStack, instance, NATIVE, UNKNOWN } from "./stack-view";

describe("gpucloud-instance-gpus", () => {
  it("fails an instance with more GPUs than maxGpusPerInstance, and passes one with as many", async () => {
    expect(
      await checkResource(instanceGpus, instance("big", { gpuNums: 8 }), { maxGpusPerInstance: 4 }),
    ).toEqual({
      violations: [{ message: '"big" would have 8 GPUs, over maxGpusPerInstance 4.' }],
    });
    expect(
      await checkResource(instanceGpus, instance("ok", { gpuNums: 4 }, NATIVE), { maxGpusPerInstance: 4 }),
    ).toEqual({ violations: [] });
  });

  it("passes an instance declared stopped, and by default every count the cloud takes (at most 8)", async () => {
    const stopped = instance("off", { gpuNums: 8, running: false });
    expect(await checkResource(instanceGpus, stopped, { maxGpusPerInstance: 1 })).toEqual({ violations: [] });
    expect(await checkResource(instanceGpus, instance("eight", { gpuNums: 8 }))).toEqual({ violations: [] });
  });

  it("cannot run at preview while the GPU count is not known", async () => {
    expect(await checkResource(instanceGpus, instance("later", { gpuNums: UNKNOWN }))).toEqual({
      violations: [],
      cannotRun: "string value at .gpuNums can't be known during preview",
    });
  });
});

describe("gpucloud-stack-gpus", () => {
  it("fails a stack whose running instances have more GPUs together than maxGpusPerStack; stopped ones count none", async () => {
    const fleet = [
      instance("a", { gpuNums: 4 }),
      instance("b", { gpuNums: 4 }, NATIVE),
      instance("c", { gpuNums: 1 }),
      instance("off", { gpuNums: 8, running: false }),
    ];
    expect(await checkStack(stackGpus, fleet, { maxGpusPerStack: 8 })).toEqual({
      violations: [
        {
          message:
            "The stack's 3 running instances would have 9 GPUs together, over maxGpusPerStack 8. " +
            "Check the instance count and gpuNums, or raise maxGpusPerStack in the policy pack config.",
        },
      ],
    });
    expect(await checkStack(stackGpus, fleet, { maxGpusPerStack: 9 })).toEqual({ violations: [] });
  });

  it("catches the count typo that rents 80 cards with its default cap of 16", async () => {
    const typo = Array.from({ length: 80 }, (_, i) => instance(`fleet-${i}`));
    const { violations } = await checkStack(stackGpus, typo);
    expect(violations[0].message).toMatch(
      /^The stack's 80 running instances would have 80 GPUs together, over maxGpusPerStack 16/,
    );
  });

  it("at preview: over the cap on the known counts is a violation; within it, it cannot run", async () => {
    const later = instance("later", { gpuNums: UNKNOWN });
    const over = await checkStack(stackGpus, [instance("a", { gpuNums: 8 }), later], { maxGpusPerStack: 4 });
    expect(over.violations[0].message).toContain(
      "8 GPUs together (and more whose GPU count is not known until up)",
    );
    expect(await checkStack(stackGpus, [instance("a"), later], { maxGpusPerStack: 4 })).toEqual({
      violations: [],
      cannotRun: "string value at .gpuNums can't be known during preview",
    });
  });
});
