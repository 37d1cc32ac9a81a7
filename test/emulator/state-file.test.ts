import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Emulator, MAX_STORED_INPUT_BYTES } from "pulumi-gpucloud/emulator";
import { writeNewFile } from "../../emulator/core/state/persistence";
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
    await expect(new Emulator({ stateFile: file }).open()).rejects.toThrow(
      `state file ${file} is refused: rooms.instances[0].owner: user ghost has no balance in wallet.balances`,
    );
    expect(readFileSync(file, "utf8")).toBe(text);
  });

  it("refuses an instance whose pre-deduction is missing from the wallet", async () => {
    const state = await savedState();
    state.wallet.reservations = [];
    const file = join(dir, "state.json");
    writeFileSync(file, JSON.stringify(state));
    await expect(new Emulator({ stateFile: file }).open()).rejects.toThrow(
      /rooms\.instances\[0\]\.first_hour_reservation: reservation .* is not in wallet\.reservations/,
    );
  });

  it("refuses a clock that is not a whole number of seconds", async () => {
    const state = await savedState();
    const file = join(dir, "state.json");
    for (const now of [-1, 1.5, "1800000000", null]) {
      writeFileSync(file, JSON.stringify({ ...state, now }));
      await expect(new Emulator({ stateFile: file }).open()).rejects.toThrow(
        new RegExp(`state file ${file} is refused: now: `),
      );
    }
  });

  it("removes the temporary files an emulator left when it crashed while saving, and no one else's", async () => {
    const file = join(dir, "state.json");
    writeFileSync(`${file}.4242.tmp`, "half a state, named as emulators before 0.1 named it");
    writeFileSync(`${file}.4242.a1b2c3d4e5f6.tmp`, "half a state");
    // Only the lock's holder writes them: a pid that runs (a container's pid 1, say) proves nothing.
    writeFileSync(`${file}.${process.pid}.a1b2c3d4e5f6.tmp`, "half a state of a pid that runs now");
    writeFileSync(join(dir, "other.json.12.tmp"), "not ours");
    writeFileSync(`${file}.backup.tmp`, "not an emulator's name");
    const emulator = new Emulator({ stateFile: file });
    await emulator.open();
    expect(readdirSync(dir).sort()).toEqual([
      "other.json.12.tmp",
      "state.json",
      "state.json.backup.tmp",
      "state.json.lock",
    ]);
    expect(emulator.notices.sort()).toEqual(
      [
        `removed state.json.${process.pid}.a1b2c3d4e5f6.tmp, left behind by an emulator that crashed while saving`,
        "removed state.json.4242.a1b2c3d4e5f6.tmp, left behind by an emulator that crashed while saving",
        "removed state.json.4242.tmp, left behind by an emulator that crashed while saving",
      ].sort(),
    );
    await emulator.close();
  });

  it("fails a start whose file cannot be written, naming it", async () => {
    const file = join(dir, "no-such-folder", "state.json");
    await expect(new Emulator({ stateFile: file }).open()).rejects.toThrow(
      `state file ${file} cannot be written (ENOENT): its lock ${file}.lock cannot be created`,
    );
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

describe("an image saved from an instance with a 50-character title", () => {
  // 50 characters (code points, as the API counts them): a flag, a space, 33 letters, a family emoji of
  // 7 code points (4 people joined by 3 zero-width joiners) and "-runner". An image title keeps 39 of
  // them before "-<10 digits>": the cut falls inside the family, which must go whole.
  const FAMILY = "\u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}";
  const LETTERS = "a".repeat(33);
  const TITLE = `\u{1F1EF}\u{1F1F5} ${LETTERS}${FAMILY}-runner`;
  const START = 1_800_000_000;

  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "gpucloud-image-title-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function saveImage(t: TestEmulator): Promise<string> {
    const uuid = (await createInstance(t)).instance_uuid;
    await t.advance(60);
    const titled = await t.api("POST", "/instance/update_title", {
      body: { instance_uuid: uuid, title: TITLE },
    });
    expect(titled.body.code).toBe(0);
    expect((await t.api("POST", "/instance/save_image", { body: { instance_uuid: uuid } })).body.code).toBe(
      0,
    );
    return (await t.api("GET", "/image/private/list")).body.data.image_list[0].title;
  }

  it("is titled within 50 characters, cut between graphemes before the time", async () => {
    expect(Array.from(TITLE)).toHaveLength(50);
    const t = await startTestEmulator({ startTime: START });
    try {
      const title = await saveImage(t);
      expect(title).toBe(`\u{1F1EF}\u{1F1F5} ${LETTERS}-${START + 60}`);
      expect(Array.from(title).length).toBeLessThanOrEqual(50);
    } finally {
      await t.close();
    }
  });

  it("survives a restart on its state file", async () => {
    const file = join(dir, "state.json");
    const first = await startTestEmulator({ stateFile: file, startTime: START });
    const title = await saveImage(first);
    await first.close();
    const again = await startTestEmulator({ stateFile: file });
    try {
      expect((await again.api("GET", "/image/private/list")).body.data.image_list[0].title).toBe(title);
    } finally {
      await again.close();
    }
  });

  it("survives a snapshot's export and import", async () => {
    const t = await startTestEmulator({ startTime: START });
    try {
      const title = await saveImage(t);
      const exported = (await t.admin("GET", "/snapshot")).body;
      await t.admin("POST", "/reset");
      const imported = await t.admin("PUT", "/snapshot", exported);
      expect([imported.status, imported.body]).toEqual([200, { imported: true, now: START + 60 }]);
      expect((await t.api("GET", "/image/private/list")).body.data.image_list[0].title).toBe(title);
    } finally {
      await t.close();
    }
  });

  it("is cut on load when an earlier emulator saved it whole, so its state file starts again", async () => {
    const file = join(dir, "state.json");
    const first = await startTestEmulator({ stateFile: file, startTime: START });
    await saveImage(first);
    await first.close();
    const state = JSON.parse(readFileSync(file, "utf8"));
    state.rooms.images[0].title = `${TITLE}-${START + 60}`;
    writeFileSync(file, JSON.stringify(state));
    const again = await startTestEmulator({ stateFile: file });
    try {
      expect((await again.api("GET", "/image/private/list")).body.data.image_list[0].title).toBe(
        `\u{1F1EF}\u{1F1F5} ${LETTERS}-${START + 60}`,
      );
    } finally {
      await again.close();
    }
    // Any other title over the limit is still refused by name: no emulator made it.
    state.rooms.images[0].title = "x".repeat(51);
    writeFileSync(file, JSON.stringify(state));
    await expect(startTestEmulator({ stateFile: file })).rejects.toThrow(
      "rooms.images[0].title: must be at most 50 characters",
    );
  });
});

describe("the state file and symbolic links", () => {
  let dir: string;
  let file: string;
  let victim: string;
  const VICTIM_TEXT = "a file the emulator must never write\n";
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "gpucloud-links-"));
    file = join(dir, "state.json");
    victim = join(dir, "victim.txt");
    writeFileSync(victim, VICTIM_TEXT);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("refuses a state path that is a symbolic link, naming its target, and writes nothing through it", async () => {
    symlinkSync(victim, file);
    await expect(new Emulator({ stateFile: file }).open()).rejects.toThrow(
      `state file ${file} is a symbolic link (to ${victim}): saving replaces the file and would leave the link's target behind; give the path of the file itself`,
    );
    expect(readFileSync(victim, "utf8")).toBe(VICTIM_TEXT);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it("refuses a dangling link too, rather than creating the file it names", async () => {
    const elsewhere = join(dir, "elsewhere.json");
    symlinkSync(elsewhere, file);
    await expect(new Emulator({ stateFile: file }).open()).rejects.toThrow("is a symbolic link");
    expect(existsSync(elsewhere)).toBe(false);
  });

  it("is not turned onto another file by links placed at the temporary names in advance", async () => {
    // The names emulators used before: FILE.<pid>.tmp, predictable from the pid.
    for (const pid of [process.pid, process.pid + 1, process.pid + 2])
      symlinkSync(victim, `${file}.${pid}.tmp`);
    const t = await startTestEmulator({ stateFile: file });
    try {
      await createInstance(t);
      await t.advance(60);
    } finally {
      await t.close();
    }
    expect(readFileSync(victim, "utf8")).toBe(VICTIM_TEXT);
    expect(JSON.parse(readFileSync(file, "utf8")).rooms.instances).toHaveLength(1);
    // Every write's own temporary file was renamed into place: none is left.
    expect(readdirSync(dir).filter((name) => /\.[0-9a-f]{12}\.tmp$/.test(name))).toEqual([]);
  });

  it("creates each temporary file exclusively: a link at the name, dangling or not, fails the write and is not followed", async () => {
    const atName = join(dir, "state.json.1.aaaaaaaaaaaa.tmp");
    symlinkSync(victim, atName);
    await expect(writeNewFile(atName, [Buffer.from("{}")], 2)).rejects.toMatchObject({ code: "EEXIST" });
    expect(readFileSync(victim, "utf8")).toBe(VICTIM_TEXT);
    const dangling = join(dir, "state.json.1.bbbbbbbbbbbb.tmp");
    symlinkSync(join(dir, "made-by-the-write.json"), dangling);
    await expect(writeNewFile(dangling, [Buffer.from("{}")], 2)).rejects.toMatchObject({ code: "EEXIST" });
    expect(existsSync(join(dir, "made-by-the-write.json"))).toBe(false);
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
    expect(over.body.code).toBe(1);
    expect(over.body.msg).toMatch(/^inputs: must be at most/);
    expect((await submit("x".repeat(MAX_STORED_INPUT_BYTES - 200), "under")).body.code).toBe(0);
  });
});
