import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Emulator, MAX_STORED_INPUT_BYTES } from "pulumi-gpucloud/emulator";
import { createInstance, startTestEmulator, type TestEmulator } from "./helpers";

describe("emulator state file", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "gpucloud-state-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A state document as the emulator writes it, from a real emulator with one instance. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function savedState(): Promise<Record<string, any>> {
    const file = join(dir, "source.json");
    const t = await startTestEmulator({ stateFile: file, startTime: 1_800_000_000 });
    await createInstance(t);
    await t.close();
    return JSON.parse(readFileSync(file, "utf8"));
  }

  it("writes the file with mode 0600, also over an older file that others could read", async () => {
    const file = join(dir, "state.json");
    writeFileSync(file, JSON.stringify(await savedState()));
    chmodSync(file, 0o644);
    const t = await startTestEmulator({ stateFile: file });
    try {
      expect(statSync(file).mode & 0o777).toBe(0o600);
      await createInstance(t);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    } finally {
      await t.close();
    }
  });

  it("refuses records that name a user without an account, naming the field, and keeps the file", async () => {
    const state = await savedState();
    state.rooms.instances[0].owner = "ghost";
    const file = join(dir, "state.json");
    const text = JSON.stringify(state);
    writeFileSync(file, text);
    expect(() => new Emulator({ stateFile: file })).toThrow(
      `state file ${file} is refused: rooms.instances[0].owner: user ghost has no balance in wallet.balances`,
    );
    expect(readFileSync(file, "utf8")).toBe(text);
  });

  it("refuses an instance whose pre-deduction is missing from the wallet", async () => {
    const state = await savedState();
    state.wallet.reservations = [];
    const file = join(dir, "state.json");
    writeFileSync(file, JSON.stringify(state));
    expect(() => new Emulator({ stateFile: file })).toThrow(
      /rooms\.instances\[0\]\.first_hour_reservation: reservation .* is not in wallet\.reservations/,
    );
  });

  it("refuses a clock that is not a whole number of seconds", async () => {
    const state = await savedState();
    const file = join(dir, "state.json");
    for (const now of [-1, 1.5, "1800000000", null]) {
      writeFileSync(file, JSON.stringify({ ...state, now }));
      expect(() => new Emulator({ stateFile: file })).toThrow(
        new RegExp(`state file ${file} is refused: now: `),
      );
    }
  });

  it("removes the temporary files of processes that crashed while saving, and keeps a running one's", async () => {
    const file = join(dir, "state.json");
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid!;
    writeFileSync(`${file}.${dead}.tmp`, "half a state");
    writeFileSync(`${file}.${process.ppid}.tmp`, "someone else's write in progress");
    writeFileSync(join(dir, "other.json.12.tmp"), "not ours");
    const emulator = new Emulator({ stateFile: file });
    expect(existsSync(`${file}.${dead}.tmp`)).toBe(false);
    expect(existsSync(`${file}.${process.ppid}.tmp`)).toBe(true);
    expect(existsSync(join(dir, "other.json.12.tmp"))).toBe(true);
    expect(emulator.notices).toEqual([
      `removed state.json.${dead}.tmp, left behind by an emulator that crashed while saving`,
    ]);
  });

  it("fails a start whose file cannot be written, naming it", () => {
    const file = join(dir, "no-such-folder", "state.json");
    expect(() => new Emulator({ stateFile: file })).toThrow(`state file ${file} cannot be written (ENOENT)`);
  });

  it("answers a change it could not save with 500 and says why, instead of acknowledging it", async () => {
    const sub = join(dir, "sub");
    mkdirSync(sub);
    const t = await startTestEmulator({ stateFile: join(sub, "state.json") });
    try {
      const { instance_uuid } = await createInstance(t);
      rmSync(sub, { recursive: true, force: true });
      const answer = await t.api("POST", "/instance/update_title", { body: { instance_uuid, title: "y" } });
      expect(answer.status).toBe(500);
      expect(answer.body).toMatchObject({ code: -2, msg: expect.stringContaining("could not be saved") });
    } finally {
      await t.close().catch(() => undefined);
    }
  });

  it("holds the same document GET /_emulator/snapshot exports, with runs settled and pending", async () => {
    const file = join(dir, "state.json");
    const t = await startTestEmulator({ stateFile: file, balance: 100_000 });
    try {
      const video = (idempotency_key: string) =>
        t.api("POST", "/model-runs/videos", {
          body: { idempotency_key, inputs: { model: "demo-video", prompt: "p" } },
        });
      await video("settled");
      await t.api("POST", "/workflow/run/submit", {
        body: {
          workflow_id: "wf_portrait_studio",
          idempotency_key: "settled",
          inputs: { prompt: "p", reference_image: "https://example.com/a.png" },
        },
      });
      await t.advance(60);
      await video("pending");
      const cancelled = (await video("cancelled")).body.data.run_id;
      await t.api("POST", "/model-runs/cancel", { body: { run_id: cancelled } });
      const exported = (await t.admin("GET", "/snapshot")).body;
      expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(exported);
      await t.advance(60);
      const later = (await t.admin("GET", "/snapshot")).body;
      expect(later).not.toEqual(exported);
      expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(later);
    } finally {
      await t.close();
    }
  });

  it("saves concurrent changes in coalesced writes, each one on disk before its answer", async () => {
    const file = join(dir, "state.json");
    const t = await startTestEmulator({ stateFile: file, balance: 100_000 });
    try {
      const before = t.running.emulator.stateFile!.stats.writes;
      const created = await Promise.all(
        Array.from({ length: 50 }, async () => {
          const instance = await createInstance(t);
          return { uuid: instance.instance_uuid as string, onDisk: readFileSync(file, "utf8") };
        }),
      );
      for (const { uuid, onDisk } of created) expect(onDisk).toContain(uuid);
      const writes = t.running.emulator.stateFile!.stats.writes - before;
      expect(writes).toBeGreaterThan(0);
      expect(writes).toBeLessThan(50);
    } finally {
      await t.close();
    }
  });
});

describe("emulator stored inputs", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ balance: 100_000 });
  });
  afterAll(() => t.close());

  const dataUrl = (bytes: number) => `data:image/png;base64,${"A".repeat(bytes)}`;

  it(`refuses model-run inputs over ${MAX_STORED_INPUT_BYTES} bytes naming the field and the limit`, async () => {
    const answer = await t.api("POST", "/model-runs/videos", {
      body: {
        idempotency_key: "big",
        inputs: {
          model: "demo-video",
          prompt: "p",
          generation_category: "first_frame_to_video",
          first_frame: dataUrl(MAX_STORED_INPUT_BYTES),
        },
      },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe(1);
    expect(answer.body.msg).toMatch(
      new RegExp(`^inputs: must be at most ${MAX_STORED_INPUT_BYTES} bytes as JSON`),
    );
    expect(answer.body.msg).toContain("POST /assets");
    expect((await t.api("GET", "/model-runs/list")).body.data.total).toBe(0);
  });

  it("refuses workflow inputs over the limit the same way, and accepts them under it", async () => {
    const submit = (prompt: string, key: string) =>
      t.api("POST", "/workflow/run/submit", {
        body: {
          workflow_id: "wf_portrait_studio",
          idempotency_key: key,
          inputs: { prompt, reference_image: "https://example.com/face.png" },
        },
      });
    const over = await submit("x".repeat(MAX_STORED_INPUT_BYTES), "over");
    expect(over.status).toBe(400);
    expect(over.body.msg).toMatch(/^inputs: must be at most/);
    expect((await submit("x".repeat(MAX_STORED_INPUT_BYTES - 200), "under")).body.code).toBe(0);
  });
});
