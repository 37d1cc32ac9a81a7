/**
 * Scenario: GPUs run out at random. 100 Instance creates (40 through the native plugin) at parallelism 16,
 * each declaring 4090D with fallbacks 5090 then 4080, while the cloud refuses 30% of the creates of 4090D
 * and of 5090 for want of cards (the emulator stock's probability form, seeded) and a seeded schedule
 * loses the answer of 15% of the create calls (reset before any work, dropped after it, HTTP 500 after
 * it). A refusal must send the create on to the next model at once; a lost answer, refused or not, must
 * go to the lost-create recovery of that model's spec. Afterwards every instance runs on a model of its
 * list and the state says which, none is orphaned or made twice, and the account paid for instances
 * the cloud made and nothing else. Outcomes are judged by counts and states, never by timings.
 */
import type { Emulator } from "pulumi-gpucloud/emulator";
import type { ResourceState } from "../harness";
import { onInstancesMade } from "../support/emulator-hooks";
import { reportFigure } from "../support/figures";
import { DOORS, type Door } from "../support/providers";
import { startWorld, type World } from "../support/world";
import { bounded, FAULT_EMULATOR, FaultSchedule, seconds } from "./schedule";

const CREATES: Record<Door, number> = { dynamic: 100, native: 40 };
const PARALLELISM = 16;
const REFUSE_PROBABILITY = 0.3;
const LOST_RATE = 0.15;
const CREATE = "/instance/create_by_pod";
/** A short request timeout: the recovery's settle and claim times (twice it) pass on the real clock. */
const CONFIG = { "gpucloud:requestTimeoutMs": "500" };

jest.setTimeout(600_000);

/** Counts the creates and starts the emulator's GPU stock refuses, by model. */
function countRefusals(emulator: Emulator): { byModel: Map<string, number>; undo: () => void } {
  const stock = (
    emulator.instances as unknown as { stock: { admit: (m: { gpu_uuid: string }, n: number) => void } }
  ).stock;
  const admit = stock.admit;
  const byModel = new Map<string, number>();
  stock.admit = (model, cards) => {
    try {
      admit.call(stock, model, cards);
    } catch (err) {
      byModel.set(model.gpu_uuid, (byModel.get(model.gpu_uuid) ?? 0) + 1);
      throw err;
    }
  };
  return { byModel, undo: () => (stock.admit = admit) };
}

describe.each(DOORS)("GPUs running out at random, through the %s door", (door) => {
  const creates = CREATES[door];
  let w: World;
  let gpu4080: string;
  beforeAll(async () => {
    w = await startWorld({ emulator: FAULT_EMULATOR, config: CONFIG, door });
    gpu4080 = (await w.api.catalogue.gpus()).gpu_list.find((g) => g.gpu_name === "4080")!.gpu_uuid;
  });
  afterAll(() => w?.stop());

  it("lands every instance on a model of its list, none orphaned or twice, and bills only what was made", async () => {
    const started = performance.now();
    const models = [w.gpu4090, w.gpu5090, gpu4080];
    for (const [gpu, seed] of [
      [w.gpu4090, 32],
      [w.gpu5090, 33],
    ] as const) {
      await w.emu.admin("PUT", `/gpus/${gpu}/stock`, {
        free: null,
        refuse_probability: REFUSE_PROBABILITY,
        seed,
      });
    }
    const wallet = w.emulator.wallet;
    const [user] = wallet.users();
    const balanceBefore = Number(wallet.balance(user));
    const made = new Set<string>();
    const undoMade = onInstancesMade(w.emulator, (uuid) => made.add(uuid));
    const refusals = countRefusals(w.emulator);
    const schedule = new FaultSchedule(
      w.emulator,
      [
        {
          name: "create",
          matches: (call) => call.path === CREATE,
          rate: LOST_RATE,
          kinds: [
            "reset",
            "drop_after_commit",
            {
              name: "http500",
              arm: (table, path) => table.add({ path, kind: "http_500_after_commit", count: 1 }),
            },
          ],
          inTurn: true,
        },
      ],
      20261128,
    );

    const inputs = await Promise.all(
      Array.from({ length: creates }, (_, i) =>
        w.h.checked("Instance", { ...w.spec, fallbackGpuUuids: [w.gpu5090, gpu4080], title: `short-${i}` }),
      ),
    );
    const results = await w.advancing(
      bounded(
        PARALLELISM,
        inputs.map((news) => () => w.h.create("Instance", news)),
      ),
    );
    schedule.stop();
    refusals.undo();
    undoMade();

    const created = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    const failures = results.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
    const stateIds = created.map((s) => s.id);
    const cloud = w.cloudInstances();
    const orphaned = cloud.filter((id) => !stateIds.includes(id));
    const duplicated = stateIds.length - new Set(stateIds).size;
    const offList = await modelsOffList(w, created, models);

    // Every CNY that left the balance is held for, or billed to, an instance the cloud made.
    const { reservations, bills, balances } = wallet.snapshot();
    const charges = [...reservations, ...(bills[user] ?? [])];
    const chargedForNothing = charges.filter((c) => !made.has(c.resource_id)).length;
    const moved = charges.reduce((sum, c) => sum + Number(c.amount), 0);
    // `+ 0` reads -0 as 0.
    const unexplainedCny = Math.round((balanceBefore - Number(balances[user]) - moved) * 100) / 100 + 0;

    const landed = models.map((m) => created.filter((s) => s.outputs.runningGpuUuid === m).length);
    const refused = models.map((m) => refusals.byModel.get(m) ?? 0);
    const createCalls = schedule.figures.get("create")!.calls;
    reportFigure(
      "faults",
      `faults[gpu fallback]: door=${door} creates=${creates} parallelism=${PARALLELISM} succeeded=${created.length} ` +
        `failed=${failures.length} refused(4090D/5090/4080)=${refused.join("/")} landed(4090D/5090/4080)=${landed.join("/")} ` +
        `lost=${schedule.describe("create")} ${JSON.stringify(schedule.figures.get("create")!.byKind)} ` +
        `create-calls=${createCalls} made=${made.size} | orphaned=${orphaned.length} duplicated=${duplicated} ` +
        `off-list=${offList.length} charged-for-nothing=${chargedForNothing} unexplained-cny=${unexplainedCny} ` +
        `in ${seconds(performance.now() - started)}`,
    );

    expect(failures).toEqual([]);
    expect({ orphaned, duplicated, offList, chargedForNothing, unexplainedCny }).toEqual({
      orphaned: [],
      duplicated: 0,
      offList: [],
      chargedForNothing: 0,
      unexplainedCny: 0,
    });
    expect(new Set(cloud)).toEqual(new Set(stateIds));
    // The scenario played what it says: refusals of both short models, and lost answers.
    expect(refused[0]).toBeGreaterThan(0);
    expect(refused[1]).toBeGreaterThan(0);
    expect(schedule.figures.get("create")!.faults).toBeGreaterThan(0);
  });
});

/** The states whose instance does not run on a model of its list, or not on the one its state names. */
async function modelsOffList(w: World, created: ResourceState[], models: string[]): Promise<string[]> {
  const off: string[] = [];
  for (const state of created) {
    const cloud = await w.api.instances.info(state.id);
    const model = cloud.gpu_uuid ?? "";
    if (!models.includes(model) || state.outputs.runningGpuUuid !== model) off.push(state.id);
  }
  return off;
}
