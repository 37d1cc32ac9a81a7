/**
 * Scenario 1, creates under fire: 100 Instance creates through one provider server while a seeded
 * schedule drops the answer of 30% of create calls after the instance was made (drop_after_commit) and
 * fails 10% of every other call (http_500 or a reset connection). Afterwards the cloud must hold exactly
 * the instances the state holds, and destroy (still under fire) must leave none.
 */
import type { ResourceState } from "../harness";
import { startWorld, type World } from "../support/world";
import { bounded, FAULT_EMULATOR, FaultSchedule, seconds } from "./schedule";
import { reportFigure } from "../support/figures";

const CREATES = 100;
const CONCURRENCY = 20;
const CREATE_PATH = "/instance/create_by_pod";

describe("creates under fire", () => {
  let w: World;
  beforeAll(async () => (w = await startWorld({ emulator: FAULT_EMULATOR })));
  afterAll(() => w.stop());

  it("leaves no instance the state does not know, none twice, and none after destroy", async () => {
    const started = performance.now();
    const schedule = new FaultSchedule(
      w.emulator,
      [
        { name: "create", matches: (p) => p === CREATE_PATH, rate: 0.3, kinds: ["drop_after_commit"] },
        { name: "other", matches: () => true, rate: 0.1, kinds: ["http_500", "reset"] },
      ],
      20261121,
    );
    const inputs = await Promise.all(
      Array.from({ length: CREATES }, (_, i) => w.h.checked("Instance", { ...w.spec, title: `fleet-${i}` })),
    );
    const created = await w.advancing(
      bounded(
        CONCURRENCY,
        inputs.map((news, i) => () => w.h.create("Instance", news).then((s) => ({ ...s, index: i }))),
      ),
    );
    const state = created.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    const failures = created.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));

    const cloud = w.cloudInstances();
    const stateIds = state.map((s) => s.id);
    const orphaned = cloud.filter((id) => !stateIds.includes(id));
    const duplicated = stateIds.length - new Set(stateIds).size;
    const unknownToCloud = stateIds.filter((id) => !cloud.includes(id));

    const deletions = await w.advancing(
      bounded(
        CONCURRENCY,
        state.map((s: ResourceState) => () => w.h.delete("Instance", s)),
      ),
    );
    const deleteFailures = deletions.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
    schedule.stop();
    const left = w.cloudInstances();
    const other = schedule.figures.get("other")!;

    reportFigure(
      "faults",
      `faults[1 creates under fire]: creates=${CREATES} succeeded=${state.length} failed=${failures.length} ` +
        `dropped=${schedule.describe("create")} other-faults=${schedule.describe("other")} ` +
        `(500=${other.byKind.http_500 ?? 0} reset=${other.byKind.reset ?? 0}) ` +
        `orphaned=${orphaned.length} duplicated=${duplicated} lost=${unknownToCloud.length} ` +
        `left-after-destroy=${left.length} delete-failures=${deleteFailures.length} in ${seconds(performance.now() - started)}`,
    );
    expect({ failures, deleteFailures }).toEqual({ failures: [], deleteFailures: [] });
    expect({ orphaned, duplicated, unknownToCloud, left }).toEqual({
      orphaned: [],
      duplicated: 0,
      unknownToCloud: [],
      left: [],
    });
    expect(cloud).toHaveLength(CREATES);
    // The schedule really fired at about the asked rates (seeded: the same figures every run).
    expect(schedule.figures.get("create")).toMatchObject({ calls: CREATES, faults: 30 });
    expect(Math.abs(other.faults / other.calls - 0.1)).toBeLessThan(0.01);
  });
});
