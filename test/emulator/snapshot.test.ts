import { DEMO_KEY, createInstance, runningInstance, startTestEmulator, type TestEmulator } from "./helpers";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

describe("snapshots: GET and PUT /_emulator/snapshot", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ apiKeys: [DEMO_KEY, "bob:bob-key"], startTime: 1_800_000_000 });
  });
  afterAll(() => t.close());
  beforeEach(() => t.admin("POST", "/reset"));

  /** Everything a user sees through the API, for both users. */
  async function seenThroughTheApi(): Promise<Json> {
    const seen: Json = { now: await t.now() };
    for (const key of [DEMO_KEY, "bob-key"]) {
      const get = async (path: string) =>
        (await t.api("GET", path, { key, query: { page_size: 100 } })).body.data;
      seen[key] = {
        balance: await get("/balance/info"),
        instances: await get("/instance/list"),
        images: await get("/image/private/list"),
        bills: await get("/bill/list"),
        workflowRuns: await get("/workflow/run/list"),
        modelRuns: await get("/model-runs/list"),
      };
    }
    return seen;
  }

  async function makeState(): Promise<void> {
    const running = await runningInstance(t);
    await t.api("POST", "/instance/update_title", { body: { instance_uuid: running, title: "kept" } });
    await t.api("POST", "/instance/set_idle_close", {
      body: { instance_uuid: running, idle_period_minutes: 30 },
    });
    await t.api("POST", "/instance/save_image", { body: { instance_uuid: running } });
    await createInstance(t, { key: "bob-key" });
    await t.api("POST", "/workflow/run/submit", {
      body: {
        workflow_id: "wf_portrait_studio",
        idempotency_key: "snap",
        inputs: { prompt: "p", reference_image: "https://example.com/a.png" },
      },
    });
    await t.api("POST", "/model-runs/videos", {
      key: "bob-key",
      body: { idempotency_key: "snap", inputs: { model: "demo-video", prompt: "p" } },
    });
    await t.advance(17);
  }

  it("exports, resets and imports back to the same state: instances, balances, runs and clock", async () => {
    await makeState();
    const exported = (await t.admin("GET", "/snapshot")).body;
    const before = await seenThroughTheApi();
    await t.admin("POST", "/reset");
    await t.advance(5000);
    expect(await seenThroughTheApi()).not.toEqual(before);

    const imported = await t.admin("PUT", "/snapshot", exported);
    expect(imported.status).toBe(200);
    expect(imported.body).toEqual({ imported: true, now: before.now });
    expect(await seenThroughTheApi()).toEqual(before);
    expect((await t.admin("GET", "/snapshot")).body).toEqual(exported);

    // The imported state keeps living: transitions due after the snapshot still run.
    await t.advance(3600);
    const runs = (await t.api("GET", "/workflow/run/list")).body.data.items;
    expect(runs[0].run_status).toBe("succeeded");
  });

  it("holds the keys and SSH passwords, as the admin API of a local tool", async () => {
    const uuid = await runningInstance(t);
    const password = (
      await t.api("GET", "/instance/info", { query: { instance_uuid: uuid } })
    ).body.data.server_map.find((e: Json) => e.port_type === "ssh").ssh_info.password;
    const text = JSON.stringify((await t.admin("GET", "/snapshot")).body);
    expect(text).toContain(DEMO_KEY);
    expect(text).toContain(password);
  });

  it.each([
    [{}, "version: is required"],
    [{ version: 7 }, "version: is 7, but this emulator reads version 1"],
    [[], "body: must be a JSON object"],
  ])("refuses %j naming what is wrong, and changes nothing", async (document, message) => {
    const uuid = await runningInstance(t);
    const answer = await t.admin("PUT", "/snapshot", document);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe(1);
    expect(answer.body.msg).toContain(message);
    expect((await t.api("GET", "/instance/info", { query: { instance_uuid: uuid } })).body.code).toBe(0);
  });

  it("refuses a snapshot with a wrong field deep inside a room, naming the field", async () => {
    await runningInstance(t);
    const exported = (await t.admin("GET", "/snapshot")).body as Json;
    exported.rooms.instances[0].gpu_nums = "two";
    const answer = await t.admin("PUT", "/snapshot", exported);
    expect(answer.status).toBe(400);
    expect(answer.body.msg).toBe("rooms.instances[0].gpu_nums: must be a number");
    exported.rooms.instances[0].gpu_nums = 1;
    exported.wallet.balances = {};
    expect((await t.admin("PUT", "/snapshot", exported)).body.msg).toBe(
      `keys[0].user: user ${exported.keys[0].user} has no balance in wallet.balances`,
    );
  });
});

describe("snapshot import applies the API's own rules", () => {
  let t: TestEmulator;
  let exported: Json;
  beforeAll(async () => {
    t = await startTestEmulator({ startTime: 1_800_000_000 });
    const uuid = await runningInstance(t);
    await t.api("POST", "/model-runs/videos", {
      body: { idempotency_key: "rules", inputs: { model: "demo-video", prompt: "p" } },
    });
    await t.api("POST", "/instance/update_title", { body: { instance_uuid: uuid, title: "kept" } });
    exported = (await t.admin("GET", "/snapshot")).body as Json;
  });
  afterAll(() => t.close());

  /** The exported document with one change made by `change`. */
  const changed = (change: (document: Json) => void): Json => {
    const document = structuredClone(exported);
    change(document);
    return document;
  };

  it.each<[string, (document: Json) => void, string]>([
    [
      "a title over 50 characters",
      (d) => (d.rooms.instances[0].title = "x".repeat(51)),
      "rooms.instances[0].title: must be at most 50 characters",
    ],
    [
      "an unknown top-level key",
      (d) => (d.padding = "x".repeat(1 << 20)),
      "body: has an unknown field: padding",
    ],
    ["an unknown room", (d) => (d.rooms.sandboxes = []), "rooms: has an unknown field: sandboxes"],
    [
      "an unknown field of an instance",
      (d) => (d.rooms.instances[0].owner_is_admin = true),
      "rooms.instances[0]: has an unknown field: owner_is_admin",
    ],
    [
      "an unknown field of a key",
      (d) => (d.keys[0].scopes = ["admin"]),
      "keys[0]: has an unknown field: scopes",
    ],
    [
      "a gpu_nums the API never takes",
      (d) => (d.rooms.instances[0].gpu_nums = 3),
      "rooms.instances[0].gpu_nums: must be one of 1, 2, 4, 8",
    ],
    [
      "a status the cloud does not have",
      (d) => (d.rooms.instances[0].status = 99),
      "rooms.instances[0].status: must be one of",
    ],
    [
      "run inputs over 64 KiB",
      (d) => (d.rooms["model-runs"].runs[0].inputs.prompt = "x".repeat(70_000)),
      "rooms.model-runs.runs[0].inputs: must be at most 65536 bytes as JSON",
    ],
    [
      "an idempotency key over 256 characters",
      (d) => (d.rooms["model-runs"].runs[0].idempotency_key = "k".repeat(257)),
      "rooms.model-runs.runs[0].idempotency_key: must be at most 256 characters",
    ],
    [
      "a text field of megabytes",
      (d) => (d.rooms.instances[0].image_name = "x".repeat(1 << 20)),
      "rooms.instances[0].image_name: must be at most 4096 characters",
    ],
  ])(
    "refuses %s with 400 naming the path and the rule, and changes nothing",
    async (_what, change, message) => {
      const answer = await t.admin("PUT", "/snapshot", changed(change));
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe(1);
      expect(answer.body.msg).toContain(message);
      expect((await t.admin("GET", "/snapshot")).body).toEqual(exported);
    },
  );

  it("takes the exported document back as it is", async () => {
    expect((await t.admin("PUT", "/snapshot", exported)).status).toBe(200);
  });
});
