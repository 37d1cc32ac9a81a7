/**
 * Scenario 4, the emulator restarted with `--state` in the middle of a run: a fleet is being created
 * through one provider server when the emulator process goes away and comes back on the same port from
 * its state file. Every create the provider acknowledged must still be there (with its title), every
 * write the cloud acknowledged before the restart must have survived it, and nothing may be orphaned.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import type { Harness, ResourceState } from "../harness";
import { gpuUuid, pod, startTestEmulator, type TestEmulator } from "../emulator/helpers";
import { bounded, instancesIn, providerConfig, seconds, startHarness } from "./world";

const CREATES = 30;
const CONCURRENCY = 10;
/** The restart comes once this many creates have been acknowledged. */
const RESTART_AFTER = 10;

describe("an emulator restart in the middle of a run", () => {
  let emu: TestEmulator;
  let h: Harness;
  const stateFile = path.join(mkdtempSync(path.join(tmpdir(), "gpucloud-state-")), "state.json");
  const options = () => ({ stateFile, balance: 1_000_000_000 });

  beforeAll(async () => {
    emu = await startTestEmulator(options());
    h = await startHarness(providerConfig(emu.url));
  });
  afterAll(async () => {
    await h?.stop();
    await emu?.close();
  });

  it("loses nothing that was acknowledged", async () => {
    const started = performance.now();
    const spec = {
      podUuid: (await pod(emu, "ComfyUI")).uuid,
      gpuUuid: await gpuUuid(emu, "4090D"),
      gpuNums: 1,
    };
    const inputs = await Promise.all(
      Array.from({ length: CREATES }, (_, i) => h.checked("Instance", { ...spec, title: `keep-${i}` })),
    );
    const acknowledged: ResourceState[] = [];
    let restarted: Promise<void> | undefined;
    let beforeRestart: { instances: string[]; now: number } | undefined;
    let stopped = false;
    let unanswered = 0;

    const restart = async (): Promise<void> => {
      const port = emu.running.port;
      const old = emu;
      beforeRestart = { instances: instancesIn(old.running.emulator), now: old.running.now() };
      await old.close();
      unanswered = old.running.emulator.log.list().filter((r) => r.status === null).length;
      emu = await startTestEmulator({ ...options(), port });
    };
    // The clock moves from the test, on whichever emulator process is up.
    const ticker = (async () => {
      while (!stopped) {
        emu.running.advance(10);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    const results = await bounded(
      CONCURRENCY,
      inputs.map((news) => async () => {
        const state = await h.create("Instance", news);
        acknowledged.push(state);
        if (acknowledged.length === RESTART_AFTER) restarted = restart();
        return state;
      }),
    );
    await restarted;
    stopped = true;
    await ticker;

    const failures = results.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
    const cloud = instancesIn(emu.running.emulator);
    const records = new Map(
      (
        emu.running.emulator.rooms.find((r) => r.name === "instances")!.snapshot() as {
          instance_uuid: string;
          title: string;
        }[]
      ).map((i) => [i.instance_uuid, i]),
    );
    const lost = acknowledged.filter((s) => records.get(s.id)?.title !== s.outputs.title);
    const lostAtRestart = beforeRestart!.instances.filter((id) => !cloud.includes(id));
    const orphaned = cloud.filter((id) => !acknowledged.some((s) => s.id === id));

    console.log(
      `faults[4 emulator restart with --state]: creates=${CREATES} acknowledged=${acknowledged.length} failed=${failures.length} ` +
        `restarted-after=${RESTART_AFTER} held-at-restart=${beforeRestart!.instances.length} cut-unanswered=${unanswered} lost-at-restart=${lostAtRestart.length} ` +
        `acknowledged-lost=${lost.length} orphaned=${orphaned.length} clock-kept=${emu.running.now() >= beforeRestart!.now} ` +
        `in ${seconds(performance.now() - started)}`,
    );
    if (failures.length > 0) console.log(`faults[4] failed creates: ${failures.join(" | ")}`);
    expect({ lost, lostAtRestart, orphaned }).toEqual({ lost: [], lostAtRestart: [], orphaned: [] });
    // A create cut by the restart may fail (its answer and the instance can be lost together), never silently.
    expect(acknowledged.length + failures.length).toBe(CREATES);
    expect(acknowledged.length).toBeGreaterThan(RESTART_AFTER);
    expect(emu.running.now()).toBeGreaterThanOrEqual(beforeRestart!.now);
  });
});
