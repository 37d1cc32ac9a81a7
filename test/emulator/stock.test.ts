/**
 * GPU stock (emulator/stock/): per model, the free cards; a create or start needing more is refused with
 * code 1 naming the model, and nothing is made, charged or changed. Instances hold their cards from create
 * or start until stopped (22, 23) or destroyed; the cards in use are counted from the instances.
 */
import { readFileSync, rmSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seededRandom } from "pulumi-gpucloud/emulator";
import {
  type Answer,
  createInstance,
  type Envelope,
  gpuUuid,
  instanceInfo,
  pod,
  startTestEmulator,
  type TestEmulator,
} from "./helpers";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

let t: TestEmulator;
beforeAll(async () => {
  t = await startTestEmulator({ balance: 100_000, startTime: 1_800_000_000 });
});
afterAll(() => t.close());
beforeEach(() => t.admin("POST", "/reset"));

async function stockOf(name: string): Promise<Json> {
  const gpus = (await t.admin("GET", "/gpus")).body.gpus as Json[];
  return gpus.find((gpu) => gpu.gpu_name === name)!;
}

async function setStock(gpu: string, body: unknown): Promise<Answer<Json>> {
  return t.admin("PUT", `/gpus/${encodeURIComponent(gpu)}/stock`, body);
}

async function create(gpu: string, gpuNums = 1): Promise<Answer<Envelope>> {
  return t.api("POST", "/instance/create_by_pod", {
    body: { pod_uuid: (await pod(t, "ComfyUI")).uuid, gpu_uuid: await gpuUuid(t, gpu), gpu_nums: gpuNums },
  });
}

async function post(path: string, body: Json): Promise<Answer<Envelope>> {
  return t.api("POST", path, { body });
}

/** Shuts a running instance down and moves the clock until it is stopped (22). */
async function stop(uuid: string): Promise<void> {
  expect((await post("/instance/shutdown", { instance_uuid: uuid })).body.code).toBe(0);
  await t.advance(10);
}

/** An instance created, run and stopped: it holds no cards. */
async function stoppedInstance(): Promise<string> {
  const uuid = (await createInstance(t)).instance_uuid;
  await t.advance(60);
  await stop(uuid);
  return uuid;
}

async function statusOf(uuid: string): Promise<number> {
  return (await instanceInfo(t, uuid)).body.data.status;
}

/** What a refusal must leave as it was: the instances, the balance and the bills. */
async function account(): Promise<Json> {
  const get = async (path: string) => (await t.api("GET", path, { query: { page_size: 100 } })).body.data;
  return {
    instances: await get("/instance/list"),
    balance: await get("/balance/info"),
    bills: await get("/bill/list"),
  };
}

function refusal(model: string, asked: number, free: number): Envelope {
  return {
    code: 1,
    msg: `no free ${model} cards: ${asked} asked, ${free} free; try another GPU model, fewer cards or later`,
  };
}

describe("the admin API's GPU stock", () => {
  it("lists every model of the catalogue as unlimited until set, with the cards instances hold", async () => {
    await createInstance(t, { gpu: "4090D", gpuNums: 2 });
    const gpus = (await t.admin("GET", "/gpus")).body.gpus as Json[];
    const catalogue = (await t.api("GET", "/gpu/list")).body.data.gpu_list as Json[];
    expect(gpus.map((gpu) => gpu.gpu_uuid)).toEqual(catalogue.map((gpu) => gpu.gpu_uuid));
    expect(await stockOf("4090D")).toEqual({
      gpu_uuid: await gpuUuid(t, "4090D"),
      gpu_name: "4090D",
      free: null,
      in_use: 2,
      refuse_probability: 0,
    });
    expect((await create("4090D", 8)).body.code).toBe(0);
  });

  it("sets a model's free cards by gpu_name or gpu_uuid and answers its entry; null is unlimited again", async () => {
    await createInstance(t, { gpu: "5090" });
    const byName = await setStock("5090", { free: 3 });
    expect([byName.status, byName.body]).toEqual([
      200,
      { gpu_uuid: await gpuUuid(t, "5090"), gpu_name: "5090", free: 3, in_use: 1, refuse_probability: 0 },
    ]);
    expect((await setStock(await gpuUuid(t, "5090"), { free: 0 })).body.free).toBe(0);
    expect((await setStock("5090", { free: null })).body).toMatchObject({ free: null, in_use: 1 });
  });

  it.each([
    [{ free: -1 }, "free: must be a whole number of cards, at least 0, or null for unlimited"],
    [{ free: 1.5 }, "free: must be a whole number of cards, at least 0, or null for unlimited"],
    [{ free: "8" }, "free: must be a whole number of cards, at least 0, or null for unlimited"],
    [{}, "free: must be a whole number of cards, at least 0, or null for unlimited"],
    [{ free: 1, refuse_probability: 1.5 }, "refuse_probability: must be at most 1"],
    [{ free: 1, seed: 7 }, "seed: only applies with a refuse_probability above 0"],
    [{ free: 1, frea: 2 }, "body: has an unknown field: frea"],
  ])("refuses %j with 400 naming the field, and keeps the stock", async (body, msg) => {
    await setStock("4090D", { free: 4 });
    const answer = await setStock("4090D", body);
    expect([answer.status, answer.body]).toEqual([400, { code: 1, msg }]);
    expect((await stockOf("4090D")).free).toBe(4);
  });

  it("answers 404 for a GPU model the catalogue does not have", async () => {
    const answer = await setStock("4090X", { free: 1 });
    expect([answer.status, answer.body.code, answer.body.msg]).toEqual([
      404,
      -1,
      "4090X is no GPU model of the catalogue (4080, 4090D, 5090, 3090)",
    ]);
  });
});

describe("a create or start beyond the free cards", () => {
  it("refuses create_by_pod and create_by_image with code 1 naming the model: nothing made, nothing charged", async () => {
    await setStock("4090D", { free: 2 });
    expect((await create("4090D", 2)).body.code).toBe(0);
    const before = await account();
    const answer = await create("4090D", 1);
    expect([answer.status, answer.body]).toEqual([200, refusal("4090D", 1, 0)]);
    const image = (await t.api("GET", "/image/market/list")).body.data.image_list[0].uuid;
    const byImage = await post("/instance/create_by_image", {
      image_uuid: image,
      gpu_uuid: await gpuUuid(t, "4090D"),
      gpu_nums: 1,
    });
    expect(byImage.body).toEqual(refusal("4090D", 1, 0));
    expect(await account()).toEqual(before);
    // Other models are not short.
    expect((await create("5090", 1)).body.code).toBe(0);
  });

  it("counts cards, not instances: 2 asked of 1 free is refused, 1 of 1 is made", async () => {
    await setStock("5090", { free: 1 });
    expect((await create("5090", 2)).body).toEqual(refusal("5090", 2, 1));
    expect((await create("5090", 1)).body.code).toBe(0);
  });

  it("makes exactly as many instances as there are free cards out of 50 parallel creates", async () => {
    await setStock("4090D", { free: 8 });
    const answers = await Promise.all(Array.from({ length: 50 }, () => create("4090D")));
    expect(answers.filter((a) => a.body.code === 0)).toHaveLength(8);
    expect(answers.filter((a) => a.body.code === 1)).toHaveLength(42);
    expect((await t.api("GET", "/instance/list")).body.data.total).toBe(8);
    expect(await stockOf("4090D")).toMatchObject({ free: 0, in_use: 8 });
  });

  it("refuses a start needing cards another instance took meanwhile: status, cards and balance unchanged", async () => {
    await setStock("4090D", { free: 1 });
    const first = await stoppedInstance();
    expect((await create("4090D")).body.code).toBe(0);
    const before = await account();
    expect((await post("/instance/startup", { instance_uuid: first })).body).toEqual(refusal("4090D", 1, 0));
    expect(await statusOf(first)).toBe(22);
    expect(await account()).toEqual(before);
  });

  it("takes the override's model and cards on a start with gpu_uuid and gpu_nums, and shows the new model", async () => {
    await setStock("4090D", { free: 1 });
    await setStock("5090", { free: 2 });
    const moved = await stoppedInstance();
    expect((await create("4090D")).body.code).toBe(0);
    const too_many = await post("/instance/startup", {
      instance_uuid: moved,
      gpu_uuid: await gpuUuid(t, "5090"),
      gpu_nums: 4,
    });
    expect(too_many.body).toEqual(refusal("5090", 4, 2));
    const started = await post("/instance/startup", {
      instance_uuid: moved,
      gpu_uuid: await gpuUuid(t, "5090"),
      gpu_nums: 2,
    });
    expect(started.body.code).toBe(0);
    expect((await instanceInfo(t, moved)).body.data).toMatchObject({ gpu_name: "5090", gpu_nums: 2 });
    expect(await stockOf("5090")).toMatchObject({ free: 0, in_use: 2 });
    expect(await stockOf("4090D")).toMatchObject({ free: 0, in_use: 1 });
  });
});

describe("which instances hold cards", () => {
  it("holds them from create through running and shutting down (21), and gives them back at 22", async () => {
    await setStock("4090D", { free: 1 });
    const uuid = (await createInstance(t)).instance_uuid;
    expect(await stockOf("4090D")).toMatchObject({ free: 0, in_use: 1 });
    await t.advance(60);
    await post("/instance/shutdown", { instance_uuid: uuid });
    expect(await statusOf(uuid)).toBe(21);
    expect(await stockOf("4090D")).toMatchObject({ free: 0, in_use: 1 });
    await t.advance(10);
    expect(await statusOf(uuid)).toBe(22);
    expect(await stockOf("4090D")).toMatchObject({ free: 1, in_use: 0 });
  });

  it("keeps them through a restart, and takes them again at a start", async () => {
    await setStock("4090D", { free: 1 });
    const uuid = (await createInstance(t)).instance_uuid;
    await t.advance(60);
    await post("/instance/restart", { instance_uuid: uuid });
    expect(await statusOf(uuid)).toBe(27);
    expect(await stockOf("4090D")).toMatchObject({ free: 0, in_use: 1 });
    await t.advance(20);
    await stop(uuid);
    expect((await post("/instance/startup", { instance_uuid: uuid })).body.code).toBe(0);
    expect(await stockOf("4090D")).toMatchObject({ free: 0, in_use: 1 });
  });

  it.each([1, 2, 21, 22, 23])(
    "gives them back when an instance in status %i is destroyed",
    async (status) => {
      await setStock("4090D", { free: 1 });
      const uuid = (await createInstance(t)).instance_uuid;
      await t.admin("POST", `/instances/${uuid}/force`, { status });
      await post("/instance/destroy", { instance_uuid: uuid });
      expect(await stockOf("4090D")).toMatchObject({ free: 1, in_use: 0 });
    },
  );

  it("gives them back at an idle stop (at 22) and at an idle destroy", async () => {
    await setStock("4090D", { free: 2 });
    const stopped = (await createInstance(t)).instance_uuid;
    const destroyed = (await createInstance(t)).instance_uuid;
    await t.advance(60);
    await post("/instance/set_idle_close", { instance_uuid: stopped, idle_period_minutes: 10 });
    await post("/instance/set_idle_close", {
      instance_uuid: destroyed,
      idle_period_minutes: 10,
      destroy: true,
    });
    await t.advance(11 * 60 + 10);
    expect(await statusOf(stopped)).toBe(22);
    expect((await instanceInfo(t, destroyed)).body.code).toBe(-1);
    expect(await stockOf("4090D")).toMatchObject({ free: 2, in_use: 0 });
  });

  it("gives them back at an abnormal stop (23); a start from 23 needs them again", async () => {
    await setStock("4090D", { free: 1 });
    const uuid = (await createInstance(t)).instance_uuid;
    await t.advance(60);
    await t.admin("POST", `/instances/${uuid}/force`, { status: 23 });
    expect(await stockOf("4090D")).toMatchObject({ free: 1, in_use: 0 });
    expect((await create("4090D")).body.code).toBe(0);
    expect((await post("/instance/startup", { instance_uuid: uuid })).body).toEqual(refusal("4090D", 1, 0));
    expect(await statusOf(uuid)).toBe(23);
  });
});

describe("a stock below the cards in use", () => {
  it("leaves running instances their cards and shows free 0, never less; released cards go back to the stock", async () => {
    await setStock("4090D", { free: 3 });
    const uuids = [];
    for (let i = 0; i < 3; i += 1) uuids.push((await createInstance(t)).instance_uuid);
    await t.advance(60);
    // A person takes every free card (and more would be the same): the running ones keep theirs.
    expect((await setStock("4090D", { free: 0 })).body).toMatchObject({ free: 0, in_use: 3 });
    for (const uuid of uuids) expect(await statusOf(uuid)).toBe(2);
    expect((await create("4090D")).body).toEqual(refusal("4090D", 1, 0));
    await stop(uuids[0]);
    expect(await stockOf("4090D")).toMatchObject({ free: 1, in_use: 2 });
  });

  it("shows free 0 when an instance forced to run holds more cards than the stock has", async () => {
    await setStock("4090D", { free: 1 });
    const stopped = await stoppedInstance();
    expect((await create("4090D")).body.code).toBe(0);
    await t.admin("POST", `/instances/${stopped}/force`, { status: 2 });
    expect(await stockOf("4090D")).toMatchObject({ free: 0, in_use: 2 });
    // One stop frees a card, but the stock of one is still in use by the other: nothing is free yet.
    await stop(stopped);
    expect(await stockOf("4090D")).toMatchObject({ free: 0, in_use: 1 });
  });
});

describe("refusals at random (refuse_probability)", () => {
  const SEED = 20_260_101;
  const P = 0.3;

  async function outcomes(calls: number): Promise<number[]> {
    const codes = [];
    for (let i = 0; i < calls; i += 1) codes.push((await create("5090")).body.code);
    return codes;
  }

  it("refuses each create with the probability, as the seed's draws say, and repeats after a reset", async () => {
    await setStock("5090", { free: null, refuse_probability: P, seed: SEED });
    expect(await stockOf("5090")).toMatchObject({ free: null, refuse_probability: P, seed: SEED });
    const first = await outcomes(40);
    const draw = seededRandom(SEED);
    expect(first).toEqual(Array.from({ length: 40 }, () => (draw() < P ? 1 : 0)));
    expect(first.filter((code) => code === 1).length).toBeGreaterThan(0);
    expect(first.filter((code) => code === 0).length).toBeGreaterThan(0);

    await t.admin("POST", "/reset");
    await setStock("5090", { free: null, refuse_probability: P, seed: SEED });
    expect(await outcomes(40)).toEqual(first);
  });

  it("answers a random refusal like a stock refusal: code 1 naming the model, nothing made", async () => {
    await setStock("5090", { free: 5, refuse_probability: 1 });
    const before = await account();
    expect((await create("5090")).body).toEqual({
      code: 1,
      msg: "no free 5090 cards: 1 asked, none free at the moment; try another GPU model or later",
    });
    expect(await account()).toEqual(before);
  });

  it("goes on with the same draws after a snapshot's export and import", async () => {
    await setStock("5090", { free: null, refuse_probability: P, seed: SEED });
    await outcomes(10);
    const exported = (await t.admin("GET", "/snapshot")).body;
    const next = await outcomes(10);
    expect((await t.admin("PUT", "/snapshot", exported)).status).toBe(200);
    expect(await outcomes(10)).toEqual(next);
  });
});

describe("the stock in snapshots", () => {
  it("exports, resets and imports the stock back; the cards in use are counted from the instances", async () => {
    await setStock("4090D", { free: 2 });
    await createInstance(t);
    const exported = (await t.admin("GET", "/snapshot")).body as Json;
    expect(exported.rooms.gpu_stock).toEqual([
      { gpu_uuid: await gpuUuid(t, "4090D"), cards: 2, refuse_probability: 0, seed: null, draw_state: null },
    ]);
    await t.admin("POST", "/reset");
    expect((await stockOf("4090D")).free).toBeNull();
    expect((await t.admin("PUT", "/snapshot", exported)).status).toBe(200);
    expect(await stockOf("4090D")).toMatchObject({ free: 1, in_use: 1 });

    // An instance less in the document is a card more free: nothing but the instances says what is held.
    const fewer = structuredClone(exported);
    fewer.rooms.instances = [];
    await t.admin("PUT", "/snapshot", fewer);
    expect(await stockOf("4090D")).toMatchObject({ free: 2, in_use: 0 });
  });

  it.each([
    [
      "an in_use count",
      (s: Json) => (s.rooms.gpu_stock[0].in_use = 0),
      "rooms.gpu_stock[0]: has an unknown field: in_use",
    ],
    [
      "a negative stock",
      (s: Json) => (s.rooms.gpu_stock[0].cards = -1),
      "rooms.gpu_stock[0].cards: must be at least 0",
    ],
    [
      "a model twice",
      (s: Json) => s.rooms.gpu_stock.push(s.rooms.gpu_stock[0]),
      "rooms.gpu_stock[1].gpu_uuid: repeats [0]'s gpu_uuid",
    ],
    [
      "a model the catalogue lacks",
      (s: Json) => (s.rooms.gpu_stock[0].gpu_uuid = "gpu-nope"),
      "rooms.gpu_stock[0].gpu_uuid: no GPU model gpu-nope in the catalogue",
    ],
  ])("refuses a document with %s, naming the field, and changes nothing", async (_what, spoil, msg) => {
    await setStock("4090D", { free: 2 });
    const document = (await t.admin("GET", "/snapshot")).body as Json;
    spoil(document);
    const answer = await t.admin("PUT", "/snapshot", document);
    expect([answer.status, answer.body.code]).toEqual([400, 1]);
    expect(answer.body.msg).toContain(msg);
    expect((await stockOf("4090D")).free).toBe(2);
  });

  it("reads a document without a stock (an earlier emulator's) as every model unlimited", async () => {
    await setStock("4090D", { free: 2 });
    const document = (await t.admin("GET", "/snapshot")).body as Json;
    delete document.rooms.gpu_stock;
    expect((await t.admin("PUT", "/snapshot", document)).status).toBe(200);
    expect((await stockOf("4090D")).free).toBeNull();
  });
});

describe("the gpuStock option", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "gpucloud-stock-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("starts with those free cards by name or uuid, and reset goes back to them", async () => {
    const probe = await startTestEmulator();
    const uuid5090 = await gpuUuid(probe, "5090");
    await probe.close();
    const s = await startTestEmulator({
      gpuStock: { "4090D": 1, [uuid5090]: { free: null, refuse_probability: 0.5, seed: 3 } },
    });
    try {
      const gpus = (await s.admin("GET", "/gpus")).body.gpus as Json[];
      expect(gpus.find((g) => g.gpu_name === "4090D")).toMatchObject({ free: 1, in_use: 0 });
      expect(gpus.find((g) => g.gpu_name === "5090")).toMatchObject({
        free: null,
        refuse_probability: 0.5,
        seed: 3,
      });
      expect(gpus.find((g) => g.gpu_name === "4080")).toMatchObject({ free: null, refuse_probability: 0 });
      await createInstance(s);
      await s.admin("PUT", "/gpus/4090D/stock", { free: 7 });
      await s.admin("POST", "/reset");
      const reset = (await s.admin("GET", "/gpus")).body.gpus as Json[];
      expect(reset.find((g) => g.gpu_name === "4090D")).toMatchObject({ free: 1, in_use: 0 });
    } finally {
      await s.close();
    }
  });

  it.each([
    [{ "4090X": 1 }, "gpuStock: 4090X is no GPU model of the catalogue (4080, 4090D, 5090, 3090)"],
    [
      { "4090D": -1 },
      "gpuStock: 4090D.free: must be a whole number of cards, at least 0, or null for unlimited",
    ],
    [
      { "4090D": { free: 1, refuse_probability: 2 } },
      "gpuStock: 4090D.refuse_probability: must be at most 1",
    ],
    [JSON.parse('{"__proto__": 1}'), "gpuStock: __proto__ is no GPU model of the catalogue"],
  ])("refuses %j at start, naming the model and the rule", async (gpuStock, message) => {
    await expect(startTestEmulator({ gpuStock })).rejects.toThrow(message);
  });

  it("keeps the saved stock across a restart, and sets the named models' free cards now when given again", async () => {
    const file = join(dir, "state.json");
    const first = await startTestEmulator({ stateFile: file, gpuStock: { "4090D": 3, "5090": 1 } });
    await createInstance(first);
    await first.admin("PUT", "/gpus/5090/stock", { free: 4 });
    await first.close();
    expect(JSON.parse(readFileSync(file, "utf8")).rooms.gpu_stock).toHaveLength(2);

    const kept = await startTestEmulator({ stateFile: file });
    const gpus = async (s: TestEmulator) =>
      Object.fromEntries(
        ((await s.admin("GET", "/gpus")).body.gpus as Json[]).map((g) => [g.gpu_name, g.free]),
      );
    try {
      expect(await gpus(kept)).toMatchObject({ "4090D": 2, "5090": 4 });
    } finally {
      await kept.close();
    }
    const given = await startTestEmulator({ stateFile: file, gpuStock: { "4090D": 5 } });
    try {
      expect(await gpus(given)).toMatchObject({ "4090D": 5, "5090": 4 });
      expect((await given.admin("GET", "/gpus")).body.gpus).toContainEqual(
        expect.objectContaining({ gpu_name: "4090D", in_use: 1 }),
      );
    } finally {
      await given.close();
    }
  });

  it("asks for the gpu_uuid where a seed's models share a gpu_name, in the option and the admin API", async () => {
    const seed = join(dir, "seed.json");
    const gpu = (gpu_uuid: string) => ({ gpu_name: "H100", gpu_uuid, status: 1, price: { hour: 9 } });
    writeFileSync(seed, JSON.stringify({ gpus: [gpu("gpu-h100-sxm"), gpu("gpu-h100-pcie")] }));
    await expect(startTestEmulator({ seedFile: seed, gpuStock: { H100: 1 } })).rejects.toThrow(
      "gpuStock: H100 names 2 GPU models (gpu-h100-sxm, gpu-h100-pcie); give its gpu_uuid",
    );
    const s = await startTestEmulator({ seedFile: seed, gpuStock: { "gpu-h100-pcie": 1 } });
    try {
      const byName = await s.admin("PUT", "/gpus/H100/stock", { free: 2 });
      expect([byName.status, byName.body.msg]).toEqual([
        400,
        "gpu: H100 names 2 GPU models (gpu-h100-sxm, gpu-h100-pcie); give its gpu_uuid",
      ]);
      expect((await s.admin("GET", "/gpus")).body.gpus).toEqual([
        { gpu_uuid: "gpu-h100-sxm", gpu_name: "H100", free: null, in_use: 0, refuse_probability: 0 },
        { gpu_uuid: "gpu-h100-pcie", gpu_name: "H100", free: 1, in_use: 0, refuse_probability: 0 },
      ]);
    } finally {
      await s.close();
    }
  });

  it("refuses a state file whose stock names a model its catalogue lacks, naming the field", async () => {
    const file = join(dir, "state.json");
    const first = await startTestEmulator({ stateFile: file, gpuStock: { "4090D": 3 } });
    await first.close();
    const state = JSON.parse(readFileSync(file, "utf8"));
    state.rooms.gpu_stock[0].gpu_uuid = "gpu-gone";
    writeFileSync(file, JSON.stringify(state));
    await expect(startTestEmulator({ stateFile: file })).rejects.toThrow(
      `state file ${file} is refused: rooms.gpu_stock[0].gpu_uuid: no GPU model gpu-gone in the catalogue`,
    );
  });
});
