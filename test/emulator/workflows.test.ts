import Decimal from "decimal.js";
import {
  type Answer,
  type Envelope,
  startTestEmulator,
  type TestEmulator,
  HTTP_ERROR_STATUS,
} from "./helpers";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let t: TestEmulator;
const ALICE = "alice-key";
const BOB = "bob-key";
const STUDIO = "studio-key";

beforeAll(async () => {
  t = await startTestEmulator({
    ...HTTP_ERROR_STATUS,
    apiKeys: [`alice:${ALICE}`, `bob:${BOB}`, `studio:${STUDIO}`],
    balance: 100,
  });
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.admin("POST", "/reset");
});

const get = (path: string, key = ALICE) => t.api("GET", path, { key });
const submit = (body: Json, key = ALICE) => t.api("POST", "/workflow/run/submit", { key, body });
const advance = (seconds: number) => t.advance(seconds);
const balance = async (key = ALICE) => (await get("/balance/info", key)).body.data.balance as number;
const runInfo = async (id: string, key = ALICE) =>
  (await get(`/workflow/run/info?run_order_id=${id}`, key)).body.data as Json;

async function upload(name: string, type: string, key = ALICE): Promise<Json> {
  const form = new FormData();
  form.append("file", new Blob([Buffer.from("binary-bytes")], { type }), name);
  const res = await fetch(`${t.apiBase}/assets`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  const body = (await res.json()) as Json;
  expect(body.code).toBe(0);
  return body.data;
}

const PORTRAIT = "wf_portrait_studio";
const REMIX = "wf_video_remix";
let keyCounter = 0;
const portrait = (inputs: Json = {}, extra: Json = {}): Json => ({
  workflow_id: PORTRAIT,
  idempotency_key: `key-${++keyCounter}`,
  inputs: { prompt: "a portrait", reference_image: "https://example.com/face.png", ...inputs },
  ...extra,
});
const remix = (inputs: Json = {}, extra: Json = {}): Json => ({
  workflow_id: REMIX,
  idempotency_key: `key-${++keyCounter}`,
  accept_external_cost_risk: true,
  inputs: { prompt: "make it rain", source_video: "https://example.com/clip.mp4", duration: 5, ...inputs },
  ...extra,
});

function expectEngineRejection(res: Answer<Envelope>, detail: RegExp) {
  expect(res.status).toBe(400);
  expect(res.body.code).toBe(1);
  expect(res.body.data.error).toEqual({
    reason: res.body.msg,
    detail: expect.stringMatching(detail),
    engine_code: "INVALID_WORKFLOW_INPUT",
    status_code: 400,
  });
}

describe("workflow market", () => {
  it("lists published workflows newest first with the item fields public clients read", async () => {
    const res = await get("/workflow/market/list?sort=latest");
    expect(res.body).toMatchObject({ code: 0, msg: "success", data: { total: 2, page: 1, page_size: 20 } });
    expect(res.body.data.items.map((w: Json) => w.workflow_id)).toEqual([REMIX, PORTRAIT]);
    expect(Object.keys(res.body.data.items[0]).sort()).toEqual(
      [
        "workflow_id",
        "revision_id",
        "title",
        "description",
        "cover_url",
        "tags",
        "owner",
        "quote_currency",
        "quote_amount",
        "may_incur_external_model_cost",
        "updated_at",
      ].sort(),
    );
    expect(res.body.data.items[0]).toMatchObject({
      quote_currency: "CNY",
      quote_amount: "1.20000000",
      may_incur_external_model_cost: true,
    });
  });

  it("filters by keyword and tag and pages", async () => {
    expect(
      (await get("/workflow/market/list?keyword=PORTRAIT")).body.data.items.map((w: Json) => w.workflow_id),
    ).toEqual([PORTRAIT]);
    expect(
      (await get("/workflow/market/list?tag=video")).body.data.items.map((w: Json) => w.workflow_id),
    ).toEqual([REMIX]);
    const second = (await get("/workflow/market/list?page=2&page_size=1")).body.data;
    expect(second).toMatchObject({ total: 2, page: 2, page_size: 1 });
    expect(second.items.map((w: Json) => w.workflow_id)).toEqual([PORTRAIT]);
  });

  it("refuses an unknown sort and a page of 0 with code 1", async () => {
    expect((await get("/workflow/market/list?sort=trending")).body).toMatchObject({
      code: 1,
      msg: "sort: must be one of latest, popular",
    });
    expect((await get("/workflow/market/list?page=0")).status).toBe(400);
  });

  it("accepts sort=popular, as public clients send it, and puts the most-run workflow first", async () => {
    const ids = async (sort: string) =>
      (await get(`/workflow/market/list?sort=${sort}`)).body.data.items.map((w: Json) => w.workflow_id);
    expect(await ids("latest")).toEqual([REMIX, PORTRAIT]);
    expect(await ids("popular")).toEqual([REMIX, PORTRAIT]);
    expect((await submit(portrait())).body.code).toBe(0);
    expect(await ids("popular")).toEqual([PORTRAIT, REMIX]);
    expect(await ids("latest")).toEqual([REMIX, PORTRAIT]);
  });

  it("shows a non-public workflow to its owner only", async () => {
    expect(
      (await get("/workflow/market/list", STUDIO)).body.data.items.map((w: Json) => w.workflow_id),
    ).toContain("wf_team_sketch");
    expect((await get("/workflow/market/info?workflow_id=wf_team_sketch", STUDIO)).body.code).toBe(0);
    const hidden = await get("/workflow/market/info?workflow_id=wf_team_sketch");
    expect(hidden.status).toBe(404);
    expect(hidden.body.code).toBe(-1);
  });

  it("describes a workflow with manifests covering every value_type, selects and a required media input", async () => {
    const types = new Set<string>();
    for (const id of [PORTRAIT, REMIX]) {
      const detail = (await get(`/workflow/market/info?workflow_id=${id}`)).body.data;
      for (const entry of detail.editable_parameter_manifest) types.add(entry.value_type);
      expect(detail.candidate_output_manifest.length).toBeGreaterThan(0);
    }
    expect([...types].sort()).toEqual(
      [
        "string",
        "int",
        "float",
        "bool",
        "image_input",
        "video_input",
        "audio_input",
        "file_input",
        "image",
        "video",
        "audio",
        "file",
      ].sort(),
    );
    const detail = (await get(`/workflow/market/info?workflow_id=${REMIX}`)).body.data;
    expect(detail).toMatchObject({
      workflow_id: REMIX,
      revision_id: "rev_video_remix_3",
      quote_currency: "CNY",
      gpu_model: "5090",
      may_incur_external_model_cost: true,
      external_cost_notice: expect.any(String),
      owner: { user_id: expect.any(String), display_name: expect.any(String) },
    });
    const fps = detail.editable_parameter_manifest.find((e: Json) => e.name === "fps");
    expect(fps.ui_schema).toMatchObject({
      control: "select",
      options: [
        { label: "24", value: 24 },
        { label: "29.97", value: 29.97 },
      ],
    });
    const loop = detail.editable_parameter_manifest.find((e: Json) => e.name === "loop");
    expect(loop.ui_schema.options.map((o: Json) => o.value)).toEqual([true, false]);
    expect(detail.editable_parameter_manifest.find((e: Json) => e.name === "source_video")).toMatchObject({
      required: true,
      value_type: "video_input",
    });
    expect(detail.candidate_output_manifest[0]).toEqual(
      expect.objectContaining({
        name: "remix",
        type: "video",
        node_id: expect.any(String),
        output_key: "videos",
        file_index: 0,
      }),
    );
  });

  it("answers 404 code -1 for an unknown workflow and code 1 without workflow_id", async () => {
    expect((await get("/workflow/market/info?workflow_id=wf_nope")).body).toMatchObject({
      code: -1,
      msg: expect.stringMatching(/not found/),
    });
    expect((await get("/workflow/market/info")).body).toMatchObject({
      code: 1,
      msg: "workflow_id: is required",
    });
  });
});

describe("workflow run submit and lifecycle", () => {
  it("pre-deducts the quote, runs 5 s queued and 20 s running, then settles by running time", async () => {
    const res = await submit(portrait());
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data).toMatchObject({
      workflow_id: PORTRAIT,
      revision_id: "rev_portrait_studio_2",
      quote_currency: "CNY",
      quote_amount: "0.50000000",
      freeze_status: "frozen",
      run_status: "queued",
      idempotent_replay: false,
    });
    for (const field of ["run_order_id", "task_id", "prompt_id", "billing_run_id"])
      expect(typeof data[field]).toBe("string");
    expect(await balance()).toBe(99.5);

    await advance(4);
    expect((await runInfo(data.run_order_id)).run_status).toBe("queued");
    await advance(1);
    expect((await runInfo(data.run_order_id)).run_status).toBe("running");
    await advance(19);
    expect((await runInfo(data.run_order_id)).run_status).toBe("running");
    await advance(1);
    const done = await runInfo(data.run_order_id);
    expect(done).toMatchObject({
      run_status: "succeeded",
      submission_status: "submitted",
      freeze_status: "released",
      settlement_status: "settled",
      compute_cost: "0.30000000",
      external_model_cost: "0.00000000",
      total_cost: "0.30000000",
      final_amount: "0.30000000",
      released_amount: "0.20000000",
      error_code: "",
      error_message: "",
      outputs: { portrait: expect.stringMatching(/^https:\/\/.+\.png$/) },
      inputs: { prompt: "a portrait", reference_image: "https://example.com/face.png" },
    });
    expect(done.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(await balance()).toBe(new Decimal(100).minus("0.3").toNumber());
  });

  it("bills compute plus external model cost for the external workflow, to the cent", async () => {
    const { data } = (await submit(remix())).body;
    expect(await balance()).toBe(98.8);
    await advance(25);
    expect(await runInfo(data.run_order_id)).toMatchObject({
      run_status: "succeeded",
      compute_cost: "0.40000000",
      external_model_cost: "0.40000000",
      total_cost: "0.80000000",
      released_amount: "0.40000000",
      outputs: { remix: expect.any(String), voice_over: expect.any(String) },
    });
    expect(await balance()).toBe(99.2);
  });

  it("refuses the external workflow unless accept_external_cost_risk is true, charging nothing", async () => {
    for (const flag of [undefined, false]) {
      const res = await submit(remix({}, { accept_external_cost_risk: flag }));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        code: 1,
        msg: expect.stringMatching(/^accept_external_cost_risk: must be true/),
      });
    }
    expect(await balance()).toBe(100);
  });

  it("fails a run whose prompt contains FAIL, charging compute only and releasing the rest", async () => {
    const { data } = (await submit(remix({ prompt: "please FAIL" }))).body;
    await advance(25);
    const run = await runInfo(data.run_order_id);
    expect(run).toMatchObject({
      run_status: "failed",
      error_code: "EXECUTION_FAILED",
      error_message: expect.stringContaining("FAIL"),
      compute_cost: "0.40000000",
      external_model_cost: "0.00000000",
      released_amount: "0.80000000",
      freeze_status: "released",
      settlement_status: "settled",
      outputs: {},
    });
    expect(await balance()).toBe(99.6);
    const execution = (await get(`/workflow/run/execution?run_order_id=${data.run_order_id}`)).body.data;
    expect(execution.error).toMatchObject({
      code: "EXECUTION_FAILED",
      message: run.error_message,
      engine_code: "EXECUTION_FAILED",
    });
  });

  it("refuses a quote the balance cannot cover with code 1 and creates no run", async () => {
    await t.admin("PUT", "/users/alice/balance", { balance: 0.49 });
    const res = await submit(portrait());
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 1, msg: expect.stringMatching(/^insufficient balance/) });
    expect((await get("/workflow/run/list")).body.data.total).toBe(0);
  });

  it("pins an older revision: its quote and its manifest; an unknown revision is 404 code -1", async () => {
    const res = await submit(portrait({}, { revision_id: "rev_portrait_studio_1" }));
    expect(res.body.data).toMatchObject({ revision_id: "rev_portrait_studio_1", quote_amount: "0.40000000" });
    const old = await submit(
      portrait({ style_image: "https://example.com/s.png" }, { revision_id: "rev_portrait_studio_1" }),
    );
    expectEngineRejection(old, /style_image is not in the manifest/);
    const missing = await submit(portrait({}, { revision_id: "rev_nope" }));
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe(-1);
  });

  it("refuses a body without idempotency_key or workflow_id with code 1", async () => {
    expect((await submit({ workflow_id: PORTRAIT })).body).toMatchObject({
      code: 1,
      msg: "idempotency_key: is required",
    });
    expect((await submit({ idempotency_key: "x" })).body).toMatchObject({
      code: 1,
      msg: "workflow_id: is required",
    });
    expect((await submit({ workflow_id: PORTRAIT, idempotency_key: "x", inputs: [] })).body.code).toBe(1);
  });
});

describe("workflow submit idempotency", () => {
  it("returns the same record with idempotent_replay true for the same user, workflow and key", async () => {
    const body = portrait();
    const first = (await submit(body)).body.data;
    await advance(6);
    const again = (await submit({ ...body, inputs: { prompt: "other" } })).body.data;
    expect(again).toMatchObject({
      run_order_id: first.run_order_id,
      idempotent_replay: true,
      run_status: "running",
    });
    expect(await balance()).toBe(99.5);
  });

  it("charges exactly once under 20 concurrent identical submits", async () => {
    const body = portrait();
    const answers = await Promise.all(Array.from({ length: 20 }, () => submit(body)));
    const ids = new Set(answers.map((a) => a.body.data.run_order_id));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.body.data.idempotent_replay === false)).toHaveLength(1);
    expect(await balance()).toBe(99.5);
    expect((await get("/workflow/run/list")).body.data.total).toBe(1);
  });

  it("keeps keys apart per user and per workflow", async () => {
    const key = "shared-key";
    const a = (await submit({ ...portrait(), idempotency_key: key })).body.data;
    const b = (await submit({ ...portrait(), idempotency_key: key }, BOB)).body.data;
    const c = (await submit({ ...remix(), idempotency_key: key })).body.data;
    expect(new Set([a.run_order_id, b.run_order_id, c.run_order_id]).size).toBe(3);
    expect([a, b, c].map((r) => r.idempotent_replay)).toEqual([false, false, false]);
  });
});

describe("workflow input rules", () => {
  it("rejects an undeclared input name in the engine rejection shape", async () => {
    const res = await submit(portrait({ not_a_param: 1 }));
    expectEngineRejection(res, /not_a_param is not in the manifest/);
    expect(res.body.msg).toBe("unknown input not_a_param");
    expect(await balance()).toBe(100);
  });

  it("rejects a missing required input", async () => {
    const res = await submit({ workflow_id: PORTRAIT, idempotency_key: "k-req", inputs: { prompt: "x" } });
    expectEngineRejection(res, /reference_image/);
  });

  it.each([
    ["int quoted", { steps: "30" }],
    ["int with a fraction", { steps: 30.5 }],
    ["float quoted", { cfg_scale: "7.5" }],
    ["bool as a string", { hires_fix: "true" }],
    ["string as a number", { negative_prompt: 5 }],
    ["int select option quoted", { batch_size: "2" }],
    ["int select value not offered", { batch_size: 3 }],
    ["string select value not offered", { sampler: "ddim" }],
  ])("rejects %s", async (_name, inputs) => {
    expectEngineRejection(await submit(portrait(inputs)), /^inputs\./);
  });

  it("keeps JSON types: ints, floats, bools and select options in their own types", async () => {
    const ok = await submit(
      portrait({ steps: 20, cfg_scale: 7, hires_fix: true, sampler: "dpmpp_2m", batch_size: 4 }),
    );
    expect(ok.body.code).toBe(0);
    const run = await runInfo(ok.body.data.run_order_id);
    expect(run.inputs).toMatchObject({ steps: 20, cfg_scale: 7, hires_fix: true, batch_size: 4 });
    const selects = await submit(remix({ fps: 29.97, loop: true, duration: 10 }));
    expect(selects.body.code).toBe(0);
    expectEngineRejection(await submit(remix({ loop: "true" })), /inputs\.loop must be one of true, false/);
    expectEngineRejection(await submit(remix({ duration: "5" })), /inputs\.duration/);
  });

  it("accepts the legacy contains_real_person_material flag as a boolean only", async () => {
    expect((await submit(remix({ contains_real_person_material: true }))).body.code).toBe(0);
    expectEngineRejection(await submit(remix({ contains_real_person_material: "yes" })), /boolean/);
  });

  it("accepts each media form: http(s) URL, data URL, own asset:// reference and an object", async () => {
    const image = await upload("face.png", "image/png");
    const forms = [
      "http://example.com/a.png",
      "https://example.com/a.png",
      "data:image/png;base64,iVBORw0KGgo=",
      image.asset_uri,
      { uri: image.asset_uri, role: "reference_image", label: "face" },
    ];
    for (const form of forms) {
      const res = await submit(portrait({ reference_image: form }));
      expect({ form, code: res.body.code }).toEqual({ form, code: 0 });
    }
  });

  it.each([
    ["a bare asset id", "asset_0123abcd", /bare asset id/],
    ["an ftp URL", "ftp://example.com/a.png", /http\(s\) URL/],
    ["plain text", "face.png", /http\(s\) URL/],
    ["a data URL of another media type", "data:video/mp4;base64,AAAA", /video\/mp4/],
    ["a data URL without base64", "data:image/png,abc", /data URL/],
    ["an object without uri", { role: "reference_image" }, /uri must be a string/],
    ["an unknown asset", "asset://asset_ffffffff", /not found/],
  ])("rejects %s as a media input", async (_name, value, detail) => {
    expectEngineRejection(await submit(portrait({ reference_image: value })), detail);
  });

  it("rejects an asset of another media type, another user's asset and an expired one", async () => {
    const video = await upload("clip.mp4", "video/mp4");
    expectEngineRejection(
      await submit(portrait({ reference_image: video.asset_uri })),
      /video asset, image expected/,
    );
    const bobs = await upload("face.png", "image/png", BOB);
    expectEngineRejection(await submit(portrait({ reference_image: bobs.asset_uri })), /not found/);
    const mine = await upload("face.png", "image/png");
    await advance(48 * 3600);
    expectEngineRejection(await submit(portrait({ reference_image: mine.asset_uri })), /expired/);
  });

  it("trims labels of whitespace and one leading @, and refuses duplicates", async () => {
    const res = await submit(
      portrait({
        reference_image: { uri: "https://example.com/a.png", label: "  @face " },
        style_image: { uri: "https://example.com/b.png", label: "@@style" },
      }),
    );
    expect(res.body.code).toBe(0);
    const run = await runInfo(res.body.data.run_order_id);
    expect(run.inputs.reference_image.label).toBe("face");
    expect(run.inputs.style_image.label).toBe("@style");
    const dup = await submit(
      portrait({
        reference_image: { uri: "https://example.com/a.png", label: "@face" },
        style_image: { uri: "https://example.com/b.png", label: " face" },
      }),
    );
    expectEngineRejection(dup, /label "face" is used more than once/);
  });
});

describe("workflow run queries", () => {
  it("lists the caller's runs newest first, filtered by workflow_id and status, paged", async () => {
    const a = (await submit(portrait())).body.data;
    await advance(30);
    const b = (await submit(remix())).body.data;
    const c = (await submit(portrait())).body.data;
    await submit(portrait(), BOB);
    const all = (await get("/workflow/run/list")).body.data;
    expect(all.total).toBe(3);
    expect(all.items.map((r: Json) => r.run_order_id)).toEqual([
      c.run_order_id,
      b.run_order_id,
      a.run_order_id,
    ]);
    expect(
      (await get(`/workflow/run/list?workflow_id=${REMIX}`)).body.data.items.map((r: Json) => r.run_order_id),
    ).toEqual([b.run_order_id]);
    expect(
      (await get("/workflow/run/list?status=succeeded")).body.data.items.map((r: Json) => r.run_order_id),
    ).toEqual([a.run_order_id]);
    const page = (await get("/workflow/run/list?page=2&page_size=2")).body.data;
    expect(page).toMatchObject({ total: 3, page: 2, page_size: 2 });
    expect(page.items).toHaveLength(1);
    expect((await get("/workflow/run/list?status=done")).body.code).toBe(1);
  });

  it("hides another user's run behind 404 code -1", async () => {
    const run = (await submit(portrait())).body.data;
    for (const path of [
      `/workflow/run/info?run_order_id=${run.run_order_id}`,
      `/workflow/run/execution?run_order_id=${run.run_order_id}`,
    ]) {
      const res = await get(path, BOB);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe(-1);
    }
  });

  it("reports execution with queue position, progress, logs, costs and timestamps", async () => {
    const first = (await submit(portrait())).body.data;
    await advance(2);
    const second = (await submit(portrait())).body.data;
    const queued = (await get(`/workflow/run/execution?run_order_id=${second.run_order_id}`)).body.data;
    expect(queued).toMatchObject({
      task_id: second.task_id,
      workflow_id: PORTRAIT,
      status: "queued",
      queue_info: { position: 2, estimated_wait_sec: 5 },
      progress_percent: 0,
      actual_execution_duration_sec: 0,
      outputs: {},
      error: null,
      cancel_requested: false,
      started_at: null,
      terminal_at: null,
    });
    await advance(13);
    const running = (await get(`/workflow/run/execution?run_order_id=${first.run_order_id}`)).body.data;
    expect(running).toMatchObject({
      status: "running",
      queue_info: { position: 0 },
      progress_percent: 50,
      actual_execution_duration_sec: 10,
    });
    await advance(10);
    const done = (await get(`/workflow/run/execution?run_order_id=${first.run_order_id}`)).body.data;
    expect(done).toMatchObject({
      status: "succeeded",
      progress_percent: 100,
      actual_execution_duration_sec: 20,
      compute_cost: "0.30000000",
      total_cost: "0.30000000",
      error: null,
    });
    expect(done.logs.map((l: Json) => l.event_type)).toEqual(["queued", "started", "succeeded"]);
    expect(done.logs[2]).toMatchObject({ level: "info", progress_percent: 100, at: done.terminal_at });
    expect(Date.parse(done.terminal_at) - Date.parse(done.started_at)).toBe(20_000);
  });
});
