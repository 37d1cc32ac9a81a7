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
