/**
 * The Fleet component (docs/design/contracts.md#fleet) through both front doors: in the dynamic door the
 * program declares its members itself; in the native door the engine has the plugin's Construct declare
 * them against the harness's resource monitor. Either way the same members, with the engine's URNs, the
 * same plans and the same cloud.
 */
import {
  CheckFailedError,
  OperationError,
  type EngineEvent,
  type OperationResult,
  type Step,
} from "../../testing";
import { openFleet, plan, type DoorName, type FleetWorld } from "./helpers";

const INSTANCE_TYPE: Record<DoorName, string> = {
  dynamic: "pulumi-nodejs:dynamic/gpucloud:Instance",
  native: "gpucloud:index:Instance",
};

/** `{ name: op }` of the members `trainers-<i>` and their policies `trainers-<i>-idle` for `indexes`. */
function members(indexes: number[], op: string): Record<string, string> {
  return Object.fromEntries(
    indexes.flatMap((i) => [
      [`trainers-${i}`, op],
      [`trainers-${i}-idle`, op],
    ]),
  );
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

/** The member instances the state holds, by name. */
function memberIds(w: FleetWorld): Record<string, string> {
  return Object.fromEntries(
    w.stack.current.resources.filter((r) => /^trainers-\d+$/.test(r.name)).map((r) => [r.name, r.id]),
  );
}

/** Each instance of the account with the idle period its policy has (0: none). */
async function cloudFleet(w: FleetWorld): Promise<Record<string, number>> {
  const { instance_list: listed } = await w.api.instances.list();
  return Object.fromEntries(listed.map((i) => [i.instance_uuid, i.idle_close?.idle_period_minutes ?? 0]));
}

describe.each(["dynamic", "native"] as const)("a Fleet through the %s door", (door) => {
  describe("growing and shrinking", () => {
    let w: FleetWorld;
    beforeAll(async () => {
      w = await openFleet(door, { size: 3, idlePeriodMinutes: 30 });
    });
    afterAll(() => w?.close());

    it("comes up with its members and their policies as its children, under the engine's URNs", async () => {
      const preview = await w.stack.preview();
      expect(plan(preview)).toEqual({ trainers: "create", ...members(range(0, 3), "create") });
      // Known before anything is rented: 3 x (pod ComfyUI 0.2 + 4090D 1.88) per hour.
      expect(preview.outputs.hourlyPrice).toBe(6.24);

      const up = await w.advancing(w.stack.up());
      expect(plan(up)).toEqual({ trainers: "create", ...members(range(0, 3), "create") });
      const member = up.steps.find((s) => s.name === "trainers-0")!;
      expect(member.urn).toBe(
        `urn:pulumi:${door}::fleet-test::gpucloud:index:Fleet$${INSTANCE_TYPE[door]}::trainers-0`,
      );
      const fleet = w.stack.current.resources.find((r) => r.name === "trainers")!;
      expect(fleet).toMatchObject({ component: true, type: "gpucloud:index:Fleet" });
      expect(w.stack.current.resources.filter((r) => r.parent === fleet.urn)).toHaveLength(6);

      const ids = memberIds(w);
      const inOrder = range(0, 3).map((i) => ids[`trainers-${i}`]);
      expect(up.outputs.instanceUuids).toEqual(inOrder);
      expect(fleet.outputs.instanceUuids).toEqual(inOrder);
      expect(await cloudFleet(w)).toEqual(Object.fromEntries(inOrder.map((id) => [id, 30])));
    });

    it("grows from 3 to 5 by creating members 3 and 4 alone", async () => {
      const before = memberIds(w);
      await w.setArgs({ size: 5, idlePeriodMinutes: 30 });
      const up = await w.advancing(w.stack.up());
      expect(plan(up)).toEqual({
        trainers: "update",
        ...members(range(0, 3), "same"),
        ...members(range(3, 5), "create"),
      });
      expect(up.steps.find((s) => s.name === "trainers")!.changes.map((c) => c.name)).toEqual(["size"]);
      const after = memberIds(w);
      expect(range(0, 3).map((i) => after[`trainers-${i}`])).toEqual(
        range(0, 3).map((i) => before[`trainers-${i}`]),
      );
      expect(Object.values(await cloudFleet(w))).toEqual([30, 30, 30, 30, 30]);
      expect(up.outputs.hourlyPrice).toBe(10.4);
    });

    it("shrinks from 5 to 2 by deleting members 2, 3 and 4 alone", async () => {
      const before = memberIds(w);
      await w.setArgs({ size: 2, idlePeriodMinutes: 30 });
      const up = await w.advancing(w.stack.up());
      expect(plan(up)).toEqual({
        trainers: "update",
        ...members(range(0, 2), "same"),
        ...members(range(2, 5), "delete"),
      });
      const kept = [before["trainers-0"], before["trainers-1"]];
      expect(memberIds(w)).toEqual({ "trainers-0": kept[0], "trainers-1": kept[1] });
      expect(await cloudFleet(w)).toEqual({ [kept[0]]: 30, [kept[1]]: 30 });
      expect(up.outputs.instanceUuids).toEqual(kept);
    });

    it("reads back without drift, and is destroyed children first", async () => {
      expect(plan(await w.stack.preview({ refresh: true }))).toEqual({
        trainers: "same",
        ...members(range(0, 2), "same"),
      });
      const destroy = await w.advancing(w.stack.destroy());
      expect(destroy.steps.map((s) => s.name).at(-1)).toBe("trainers");
      expect(w.stack.current.resources).toEqual([]);
      expect(await cloudFleet(w)).toEqual({});
    });
  });

  describe("bad input", () => {
    let w: FleetWorld;
    beforeAll(async () => {
      // One provider process for the cases: each refusal is the Fleet's check, in the program (dynamic
      // door) or in the plugin's Construct (native door), neither of which keeps anything between runs.
      w = await openFleet(door, { size: 1 }, { argsInFile: true });
    });
    afterAll(() => w?.close());

    it.each([
      [{ size: -1 }, "size: size must be a whole number from 0 to 1000, got -1"],
      [{ size: 1.5 }, "size: size must be a whole number from 0 to 1000, got 1.5"],
      [{ size: "3" }, "size: size must be a whole number from 0 to 1000, got a string"],
      [{ size: 1000000 }, "size: size must be a whole number from 0 to 1000, got 1000000"],
      [{ size: 2, colour: "red" }, "colour: colour is not an input of this resource"],
      [{ size: 2, gpuNums: 3 }, "gpuNums: gpuNums must be one of 1, 2, 4, 8, got 3"],
      [{ size: 2, destroyOnIdle: true }, "destroyOnIdle: destroyOnIdle acts through the idle policies"],
    ])("refuses %j at preview, naming the input, before any call to the cloud", async (args, reason) => {
      await w.setArgs(args);
      await w.clearLog();
      const failed = (await w.stack.preview().catch((err: unknown) => err)) as OperationError;
      expect(failed).toBeInstanceOf(OperationError);
      expect(failed.message).toContain(`trainers (gpucloud:Fleet) failed its check: ${reason}`);
      if (door === "native") expect(failed.failures[0]).toBeInstanceOf(CheckFailedError);
      expect(failed.steps.filter((s) => s.name !== "trainers")).toEqual([]);
      expect(await w.calls()).toEqual([]);
    });
  });

  describe("a change of what the members are made of", () => {
    let w: FleetWorld;
    const events: EngineEvent[] = [];
    beforeAll(async () => {
      w = await openFleet(door, { size: 3 }, { onEvent: (event) => events.push(event) });
      await w.advancing(w.stack.up());
    });
    afterAll(() => w?.close());

    /** Each member made anew, then its old instance deleted once the up's changes are done. */
    const replacedAll = range(0, 3).flatMap((i) => [`trainers-${i} delete`, `trainers-${i} replace`]);
    const memberSteps = (result: OperationResult) =>
      result.steps
        .filter((step) => /^trainers-\d+$/.test(step.name))
        .map((step) => `${step.name} ${step.op}`)
        .sort();

    /** The replacements' starts and ends, in the order the engine saw them. */
    const replacements = () =>
      events
        .filter((e): e is Extract<EngineEvent, { step: Step }> => "step" in e && e.step.op === "replace")
        .map((e) => `${e.kind === "step-start" ? "start" : "done"} ${e.step.name}`);

    it("replaces every member at once by default: all start while the cloud's clock stands still", async () => {
      events.length = 0;
      await w.setArgs({ size: 3, gpuUuid: w.gpu5090 });
      const up = w.stack.up();
      // Nothing boots while the clock is frozen: every start seen before it moves started at once.
      await until(() => replacements().length === 3);
      expect(replacements().sort()).toEqual(["start trainers-0", "start trainers-1", "start trainers-2"]);
      expect(memberSteps(await w.advancing(up))).toEqual(replacedAll);
    });

    it("replaces them one at a time with replaceMembers oneAtATime, each once the one before is done", async () => {
      events.length = 0;
      await w.setArgs({ size: 3, gpuUuid: w.gpu4090, replaceMembers: "oneAtATime" });
      expect(memberSteps(await w.advancing(w.stack.up()))).toEqual(replacedAll);
      expect(replacements()).toEqual([
        "start trainers-0",
        "done trainers-0",
        "start trainers-1",
        "done trainers-1",
        "start trainers-2",
        "done trainers-2",
      ]);
      const models = (await w.api.instances.list()).instance_list.map((i) => i.gpu_uuid);
      expect(models).toEqual([w.gpu4090, w.gpu4090, w.gpu4090]);
    });
  });

  describe("a new spec the cloud refuses (an invalid GPU model)", () => {
    let w: FleetWorld;
    let before: Record<string, string>;
    beforeAll(async () => {
      w = await openFleet(door, { size: 3 });
      await w.advancing(w.stack.up());
      before = memberIds(w);
    });
    afterAll(() => w?.close());

    /** The steps of the members of a failed up, and the member its first failure names. */
    async function failedUp(replaceMembers: string) {
      const invalid = await invalidGpu(w);
      await w.setArgs({ size: 3, gpuUuid: invalid, replaceMembers });
      const failed = (await w.advancing(w.stack.up()).catch((err: unknown) => err)) as OperationError;
      expect(failed).toBeInstanceOf(OperationError);
      const steps = failed.steps.filter((s) => /^trainers-\d+$/.test(s.name)).map((s) => `${s.name} ${s.op}`);
      return { steps: steps.sort(), failure: failed.failures[0].message };
    }

    it("stops a oneAtATime rollout at member 0: the others are never touched", async () => {
      const { steps, failure } = await failedUp("oneAtATime");
      expect(steps).toEqual(["trainers-0 replace"]);
      expect(failure).toMatch(
        /^replace of trainers-0 \(gpucloud:Instance\) failed: .*GPU model 3090 is not available/,
      );
      expect(memberIds(w)).toEqual(before);
      expect(Object.keys(await cloudFleet(w)).sort()).toEqual(Object.values(before).sort());
    });

    it("tries every member at once with allAtOnce, and keeps every old member when all fail", async () => {
      const { steps } = await failedUp("allAtOnce");
      expect(steps).toEqual(["trainers-0 replace", "trainers-1 replace", "trainers-2 replace"]);
      expect(memberIds(w)).toEqual(before);
    });

    it("goes on serving the stack after the failures: the old spec changes no member", async () => {
      await w.setArgs({ size: 3 });
      expect(plan(await w.stack.preview())).toEqual({
        trainers: "update",
        "trainers-0": "same",
        "trainers-1": "same",
        "trainers-2": "same",
      });
    });
  });

  it("shows members an idle policy stopped as drift, and running: true starts them again", async () => {
    const w = await openFleet(door, { size: 2, idlePeriodMinutes: 10 });
    try {
      await w.advancing(w.stack.up());
      const uuids = Object.values(memberIds(w));
      // Both members idle (utilisation 0): after 10 idle minutes the policies shut them down.
      for (const uuid of uuids) await w.setUtilization(uuid, 0);
      await w.emu.advance(11 * 60);
      await w.emu.advance(60);
      const stopped = (await w.api.instances.list()).instance_list.map((i) => i.status);
      expect(stopped).toEqual([22, 22]);
      // Busy again from here on, so the clock the up moves cannot stop them again.
      for (const uuid of uuids) await w.setUtilization(uuid, 100);

      const drift = await w.stack.preview({ refresh: true });
      expect(plan(drift)).toEqual({
        trainers: "same",
        ...members([0, 1], "same"),
        "trainers-0": "update",
        "trainers-1": "update",
      });
      expect(drift.steps.find((s) => s.name === "trainers-0")!.changes).toMatchObject([
        { name: "running", old: false, new: true },
      ]);
      await w.advancing(w.stack.up({ refresh: true }));
      const running = (await w.api.instances.list()).instance_list.map((i) => i.status);
      expect(running).toEqual([2, 2]);
    } finally {
      await w.advancing(w.stack.destroy()).catch(() => undefined);
      await w.close();
    }
  });
});

/** A GPU model the catalogue lists but the cloud rents none of (status 0). */
async function invalidGpu(w: FleetWorld): Promise<string> {
  const { gpu_list: gpus } = await w.api.catalogue.gpus();
  return gpus.find((g) => g.status === 0)!.gpu_uuid;
}

/** Waits for `condition` (the engine's own events), failing after a generous bound instead of hanging. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("the condition never held");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
