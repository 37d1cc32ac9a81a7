import Decimal from "decimal.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestEmulator, type TestEmulator, HTTP_ERROR_STATUS } from "./helpers";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let t: TestEmulator;
const ALICE = "alice-key";
const ALICE_2 = "alice-second-key";
const BOB = "bob-key";
const KEYS = [`alice:${ALICE}`, `alice:${ALICE_2}`, `bob:${BOB}`];

beforeAll(async () => {
  t = await startTestEmulator({ ...HTTP_ERROR_STATUS, apiKeys: KEYS, balance: 50 });
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.admin("POST", "/reset");
});

let counter = 0;
const video = (inputs: Json = {}, extra: Json = {}): Json => ({
  idempotency_key: `idem-${++counter}`,
  inputs: { model: "demo-video", prompt: "a fox in the snow", ...inputs },
  ...extra,
});
const submit = (body: Json, key = ALICE) => t.api("POST", "/model-runs/videos", { key, body });
const list = (query: Record<string, string | number> = {}, key = ALICE) =>
  t.api("GET", "/model-runs/list", { key, query });
const cancel = (runId: string, key = ALICE) =>
  t.api("POST", "/model-runs/cancel", { key, body: { run_id: runId } });
const events = async (runId: string, key = ALICE) =>
  (await t.api("GET", "/model-runs/events", { key, query: { run_id: runId } })).body.data.items as Json[];
const balance = async (key = ALICE) =>
  (await t.api("GET", "/balance/info", { key })).body.data.balance as number;
const runOf = async (runId: string, key = ALICE) =>
  ((await list({ page_size: 100 }, key)).body.data.items as Json[]).find((r) => r.run_id === runId);
const minus = (a: number | string, b: string) => new Decimal(a).minus(b).toNumber();

async function uploadImage(key = ALICE): Promise<string> {
  const form = new FormData();
  form.append("file", new Blob([Buffer.from("img")], { type: "image/png" }), "frame.png");
  const res = await fetch(`${t.apiBase}/assets`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  return ((await res.json()) as Json).data.asset_uri;
}

function expectParamError(res: { status: number; body: Json }, msg: RegExp) {
  expect(res.status).toBe(400);
  expect(res.body.code).toBe(1);
  expect(res.body.msg).toMatch(msg);
}

describe("POST /model-runs/videos", () => {
  it("pre-deducts the price (per second by resolution) and answers queued with the documented fields", async () => {
    const res = await submit(video({ duration: 6, resolution: "1080p" }));
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      run_id: expect.any(String),
      request_id: expect.stringMatching(/^idem-\d+$/),
      endpoint: "videos",
      model: "demo-video",
      provider: "demo",
      gateway_task_id: expect.any(String),
      status: "queued",
      settlement_status: "pending",
      frozen_amount: "1.20000000",
      idempotent_replay: false,
    });
    expect(res.body.data.created_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(await balance()).toBe(48.8);
  });

  it("defaults request_id to the idempotency key and keeps a given one", async () => {
    expect((await submit({ ...video(), idempotency_key: "k-default" })).body.data.request_id).toBe(
      "k-default",
    );
    expect((await submit(video({}, { request_id: "req-7" }))).body.data.request_id).toBe("req-7");
  });

  it.each([
    ["text_to_video", {}],
    ["first_frame_to_video", { first_frame: "https://example.com/first.png" }],
    [
      "first_last_frame_to_video",
      { first_frame: "https://example.com/a.png", last_frame: "https://example.com/b.png" },
    ],
    [
      "reference_to_video",
      {
        images: ["https://example.com/ref.png"],
        videos: ["https://example.com/ref.mp4"],
        audios: ["https://example.com/ref.mp3"],
      },
    ],
  ])("accepts demo-video %s", async (category, inputs) => {
    const res = await submit(video({ generation_category: category, ...inputs }));
    expect(res.body).toMatchObject({ code: 0, data: { status: "queued" } });
  });

  it.each([
    ["no model", { model: undefined }, /^inputs\.model: is required$/],
    ["no prompt", { prompt: undefined }, /^inputs\.prompt: is required$/],
    ["an empty prompt", { prompt: "" }, /^inputs\.prompt: must be a non-empty string$/],
    ["an unknown model", { model: "no-such-model" }, /^inputs\.model: unknown video model/],
    [
      "first_frame_to_video without first_frame",
      { generation_category: "first_frame_to_video" },
      /^inputs\.first_frame: is required for first_frame_to_video$/,
    ],
    [
      "first_last_frame_to_video without last_frame",
      { generation_category: "first_last_frame_to_video", first_frame: "https://e.com/a.png" },
      /^inputs\.last_frame: is required/,
    ],
    [
      "an unknown generation_category",
      { generation_category: "sketch_to_video" },
      /^inputs\.generation_category: must be one of/,
    ],
    [
      "a category the model does not support",
      { model: "swift-video-lite", generation_category: "reference_to_video" },
      /^inputs\.generation_category: swift-video-lite supports/,
    ],
    [
      "a resolution the model does not offer",
      { resolution: "4k" },
      /^inputs\.resolution: must be one of 480p, 720p, 1080p/,
    ],
    ["a quoted duration", { duration: "5" }, /^inputs\.duration: must be an integer$/],
    ["a duration out of range", { duration: 99 }, /^inputs\.duration: must be from 1 to 15/],
    ["an unsupported ratio", { ratio: "4:3" }, /^inputs\.ratio: must be one of/],
    [
      "a non-boolean contains_real_person_material",
      { contains_real_person_material: "yes" },
      /^inputs\.contains_real_person_material: must be a boolean$/,
    ],
    ["an undocumented input", { negative_prompt: "x" }, /^inputs\.negative_prompt: is not a known input/],
    ["images that are not an array", { images: "https://e.com/a.png" }, /^inputs\.images: must be an array/],
  ])("refuses %s with code 1", async (_name, inputs, msg) => {
    expectParamError(await submit(video(inputs)), msg);
    expect(await balance()).toBe(50);
  });

  it("refuses a body without idempotency_key or inputs", async () => {
    expectParamError(
      await submit({ inputs: { model: "demo-video", prompt: "x" } }),
      /^idempotency_key: is required$/,
    );
    expectParamError(await submit({ idempotency_key: "x" }), /^inputs: is required$/);
  });

  it("checks media forms and labels as workflows do", async () => {
    const own = await uploadImage();
    const bobs = await uploadImage(BOB);
    const ok = await submit(
      video({
        generation_category: "reference_to_video",
        images: [
          own,
          { uri: "data:image/png;base64,iVBORw0KGgo=", role: "reference_image", label: " @hero " },
          { uri: "https://e.com/b.png", label: "@@x" },
        ],
      }),
    );
    expect(ok.body.code).toBe(0);
    const stored = (await runOf(ok.body.data.run_id))!.inputs.images;
    expect(stored[1].label).toBe("hero");
    expect(stored[2].label).toBe("@x");
    expectParamError(
      await submit(video({ images: ["asset_abc123"] })),
      /^inputs\.images\[0\]: a bare asset id/,
    );
    expectParamError(await submit(video({ images: [bobs] })), /^inputs\.images\[0\]: asset .+ not found/);
    expectParamError(
      await submit(video({ videos: [own] })),
      /^inputs\.videos\[0\]: asset .+ is a image asset, video expected/,
    );
    expectParamError(
      await submit(
        video({
          generation_category: "first_frame_to_video",
          first_frame: { uri: own, label: "hero" },
          images: [{ uri: "https://e.com/b.png", label: "@hero" }],
        }),
      ),
      /^inputs\.images\[0\]: label "hero" is used more than once/,
    );
  });

  it("refuses a pre-deduction the balance cannot cover, creating no run", async () => {
    await t.admin("PUT", "/users/alice/balance", { balance: 0.49 });
    expectParamError(await submit(video({ duration: 5, resolution: "720p" })), /^insufficient balance/);
    expect((await list()).body.data.total).toBe(0);
  });
});

describe("model-run idempotency", () => {
  it("returns the same task for the same API key and key, once charged", async () => {
    const body = video();
    const first = (await submit(body)).body.data;
    const again = (await submit({ ...body, inputs: { model: "demo-video", prompt: "other", duration: 10 } }))
      .body.data;
    expect(again).toMatchObject({
      run_id: first.run_id,
      idempotent_replay: true,
      frozen_amount: first.frozen_amount,
    });
    expect(await balance()).toBe(49.5);
  });

  it("charges exactly once under 20 concurrent identical submits", async () => {
    const body = video();
    const answers = await Promise.all(Array.from({ length: 20 }, () => submit(body)));
    expect(new Set(answers.map((a) => a.body.data.run_id)).size).toBe(1);
    expect(answers.filter((a) => a.body.data.idempotent_replay === false)).toHaveLength(1);
    expect(await balance()).toBe(49.5);
    expect((await list()).body.data.total).toBe(1);
  });

  it("scopes the key to the API key: another key of the same user makes a new task", async () => {
    const body = video();
    const a = (await submit(body, ALICE)).body.data;
    const b = (await submit(body, ALICE_2)).body.data;
    expect(b.run_id).not.toBe(a.run_id);
    expect(await balance()).toBe(49);
  });
});

describe("GET /model-runs/list", () => {
  it("lists the calling key's runs newest first, filtered by status and paged", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push((await submit(video())).body.data.run_id);
    await t.advance(5);
    ids.push((await submit(video())).body.data.run_id);
    await submit(video(), ALICE_2);
    const all = (await list()).body.data;
    expect(all.total).toBe(4);
    expect(all.items.map((r: Json) => r.run_id)).toEqual([...ids].reverse());
    expect((await list({ status: "running" })).body.data.total).toBe(3);
    expect((await list({ status: "queued" })).body.data.items.map((r: Json) => r.run_id)).toEqual([ids[3]]);
    const page = (await list({ page: 2, page_size: 3 })).body.data;
    expect(page.items.map((r: Json) => r.run_id)).toEqual([ids[0]]);
    expect((await list({}, ALICE_2)).body.data.total).toBe(1);
    expect((await list({}, BOB)).body.data.total).toBe(0);
  });

  it("refuses page_size 101, page 0 and an unknown status with code 1", async () => {
    expectParamError(await list({ page_size: 101 }), /^page_size: /);
    expectParamError(await list({ page: 0 }), /^page: /);
    expectParamError(await list({ status: "done" }), /^status: must be one of/);
  });
});

describe("model-run lifecycle, settlement and events", () => {
  it("runs 5 s queued and 30 s running, then completes settled by the real cost", async () => {
    const run = (await submit(video({ duration: 4, resolution: "480p" }))).body.data;
    expect(await balance()).toBe(49.8);
    await t.advance(4);
    expect((await runOf(run.run_id))!.status).toBe("queued");
    await t.advance(1);
    expect((await runOf(run.run_id))!.status).toBe("running");
    await t.advance(29);
    expect((await runOf(run.run_id))!.status).toBe("running");
    await t.advance(1);
    expect(await runOf(run.run_id)).toMatchObject({
      status: "completed",
      settlement_status: "settled",
      frozen_amount: "0.20000000",
      settled_amount: "0.20000000",
      released_amount: "0.00000000",
      error_code: "",
      error_message: "",
    });
    expect(await balance()).toBe(minus(50, "0.2"));
    expect(
      (await events(run.run_id)).map((e) => [e.event_type, e.run_status, e.settlement_status, e.amount]),
    ).toEqual([
      ["created", "created", "pending", "0.00000000"],
      ["reserved", "created", "pending", "0.20000000"],
      ["gateway_submitted", "running", "pending", "0.00000000"],
      ["gateway_refreshed", "completed", "pending", "0.00000000"],
      ["settled", "completed", "settled", "0.20000000"],
    ]);
  });

  it("shows only created then reserved on a new task, oldest first, with local timestamps", async () => {
    const run = (await submit(video())).body.data;
    const items = await events(run.run_id);
    expect(items).toEqual([
      {
        event_type: "created",
        run_status: "created",
        settlement_status: "pending",
        amount: "0.00000000",
        error_message: "",
        created_at: run.created_at,
      },
      {
        event_type: "reserved",
        run_status: "created",
        settlement_status: "pending",
        amount: "0.50000000",
        error_message: "",
        created_at: run.created_at,
      },
    ]);
  });

  it("fails a task whose prompt contains FAIL and releases the whole pre-deduction", async () => {
    const run = (await submit(video({ prompt: "please FAIL now" }))).body.data;
    await t.advance(35);
    expect(await runOf(run.run_id)).toMatchObject({
      status: "failed",
      settlement_status: "released",
      released_amount: "0.50000000",
      error_code: "generation_failed",
      error_message: expect.stringContaining("FAIL"),
    });
    expect(await balance()).toBe(50);
    const items = await events(run.run_id);
    expect(items.map((e) => e.event_type)).toEqual([
      "created",
      "reserved",
      "gateway_submitted",
      "gateway_refreshed",
      "failed",
      "released",
    ]);
    expect(items[4]).toMatchObject({ run_status: "failed", error_message: expect.stringContaining("FAIL") });
    expect(items[5]).toMatchObject({ amount: "0.50000000", settlement_status: "released" });
  });

  it.each([
    ["queued", 2],
    ["running", 20],
  ])("cancels a %s task: cancelled, released, user_cancelled, money back", async (_state, wait) => {
    const run = (await submit(video({ duration: 10, resolution: "1080p" }))).body.data;
    expect(await balance()).toBe(48);
    await t.advance(wait);
    const res = await cancel(run.run_id);
    expect(res.body.data).toMatchObject({
      run_id: run.run_id,
      status: "cancelled",
      settlement_status: "released",
      frozen_amount: "2.00000000",
      released_amount: "2.00000000",
      error_code: "user_cancelled",
      error_message: expect.any(String),
    });
    expect(await balance()).toBe(50);
    const items = await events(run.run_id);
    expect(items.slice(-2)).toEqual([
      expect.objectContaining({
        event_type: "cancelled",
        run_status: "cancelled",
        amount: "0.00000000",
        error_message: expect.stringMatching(/.+/),
      }),
      expect.objectContaining({
        event_type: "released",
        settlement_status: "released",
        amount: "2.00000000",
      }),
    ]);
    await t.advance(60);
    expect((await runOf(run.run_id))!.status).toBe("cancelled");
    expect(await balance()).toBe(50);
  });

  it("returns a completed task unchanged when the cancel arrives after completion", async () => {
    const run = (await submit(video({ duration: 10, resolution: "1080p" }))).body.data;
    await t.advance(35);
    const res = await cancel(run.run_id);
    expect(res.body).toMatchObject({
      code: 0,
      data: {
        status: "completed",
        settlement_status: "settled",
        released_amount: "0.00000000",
        error_code: "",
      },
    });
    expect(await balance()).toBe(48);
    expect((await events(run.run_id)).map((e) => e.event_type)).not.toContain("cancelled");
  });

  it("hides another key's task from cancel and events with 404 code -1", async () => {
    const run = (await submit(video())).body.data;
    for (const res of [
      await cancel(run.run_id, ALICE_2),
      await t.api("GET", "/model-runs/events", { key: BOB, query: { run_id: run.run_id } }),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe(-1);
    }
    expect((await cancel("mrun-unknown")).status).toBe(404);
    expectParamError(
      await t.api("POST", "/model-runs/cancel", { key: ALICE, body: {} }),
      /^run_id: is required$/,
    );
  });
});

describe("state file", () => {
  it("keeps assets, workflow runs and model runs (with their idempotency keys) across a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gpucloud-emu-work-"));
    const stateFile = join(dir, "state.json");
    try {
      const first = await startTestEmulator({
        ...HTTP_ERROR_STATUS,
        apiKeys: KEYS,
        stateFile,
        startTime: 1_800_000_000,
      });
      const form = new FormData();
      form.append("file", new Blob([Buffer.from("img")], { type: "image/png" }), "face.png");
      const asset = (
        (await (
          await fetch(`${first.apiBase}/assets`, {
            method: "POST",
            headers: { authorization: `Bearer ${ALICE}` },
            body: form,
          })
        ).json()) as Json
      ).data;
      const wfBody = {
        workflow_id: "wf_portrait_studio",
        idempotency_key: "wf-k",
        inputs: { prompt: "p", reference_image: asset.asset_uri },
      };
      const wf = (await first.api("POST", "/workflow/run/submit", { key: ALICE, body: wfBody })).body.data;
      const mrBody = video();
      const mr = (await first.api("POST", "/model-runs/videos", { key: ALICE, body: mrBody })).body.data;
      await first.advance(10);
      const before = {
        asset: (await first.api("GET", `/assets/${asset.asset_id}`, { key: ALICE })).body,
        wf: (
          await first.api("GET", "/workflow/run/info", {
            key: ALICE,
            query: { run_order_id: wf.run_order_id },
          })
        ).body,
        runs: (await first.api("GET", "/model-runs/list", { key: ALICE })).body,
        events: (await first.api("GET", "/model-runs/events", { key: ALICE, query: { run_id: mr.run_id } }))
          .body,
        balance: (await first.api("GET", "/balance/info", { key: ALICE })).body,
      };
      await first.close();

      const second = await startTestEmulator({ ...HTTP_ERROR_STATUS, apiKeys: KEYS, stateFile });
      expect((await second.api("GET", `/assets/${asset.asset_id}`, { key: ALICE })).body).toEqual(
        before.asset,
      );
      expect(
        (
          await second.api("GET", "/workflow/run/info", {
            key: ALICE,
            query: { run_order_id: wf.run_order_id },
          })
        ).body,
      ).toEqual(before.wf);
      expect((await second.api("GET", "/model-runs/list", { key: ALICE })).body).toEqual(before.runs);
      expect(
        (await second.api("GET", "/model-runs/events", { key: ALICE, query: { run_id: mr.run_id } })).body,
      ).toEqual(before.events);
      expect((await second.api("GET", "/balance/info", { key: ALICE })).body).toEqual(before.balance);
      expect(
        (await second.api("POST", "/workflow/run/submit", { key: ALICE, body: wfBody })).body.data,
      ).toMatchObject({ run_order_id: wf.run_order_id, idempotent_replay: true });
      expect(
        (await second.api("POST", "/model-runs/videos", { key: ALICE, body: mrBody })).body.data,
      ).toMatchObject({ run_id: mr.run_id, idempotent_replay: true });
      await second.advance(30);
      expect(
        (
          await second.api("GET", "/workflow/run/info", {
            key: ALICE,
            query: { run_order_id: wf.run_order_id },
          })
        ).body.data.run_status,
      ).toBe("succeeded");
      expect((await second.api("GET", "/model-runs/list", { key: ALICE })).body.data.items[0].status).toBe(
        "completed",
      );
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
