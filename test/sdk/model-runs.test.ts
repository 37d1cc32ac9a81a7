import { collect, InputValidationError, NotFoundError, type GpuCloudClient } from "pulumi-gpucloud/sdk";
import { countCalls, startCloud, tick, type Cloud } from "./harness";

let cloud: Cloud;
let client: GpuCloudClient;
const fast = { pollIntervalMs: 5, maxPollIntervalMs: 10 };
const inputs = {
  model: "demo-video",
  prompt: "a cat surfing",
  duration: 5,
  resolution: "720p",
  ratio: "16:9",
};

beforeAll(async () => {
  cloud = await startCloud();
  client = cloud.client();
});
afterAll(() => cloud.close());
beforeEach(() => cloud.reset());

describe("model runs", () => {
  it("submits a task, replays the same key, and waits until it completes", async () => {
    const run = await client.modelRuns.submit({ idempotency_key: "mr-1", inputs });
    expect(run).toMatchObject({ status: "queued", settlement_status: "pending", model: "demo-video" });
    expect(run.frozen_amount).toMatch(/^\d+(\.\d+)?$/);
    expect((await client.modelRuns.submit({ idempotency_key: "mr-1", inputs })).run_id).toBe(run.run_id);
    const done = client.modelRuns.waitForRun(run.run_id, fast);
    await tick();
    await cloud.advance(35);
    expect(await done).toMatchObject({
      run_id: run.run_id,
      status: "completed",
      settlement_status: "settled",
    });
    const events = (await client.modelRuns.events(run.run_id)).items.map((e) => e.event_type);
    expect(events.slice(0, 2)).toEqual(["created", "reserved"]);
    expect(events).toContain("settled");
    const cancelledLate = await client.modelRuns.cancel(run.run_id);
    expect(cancelledLate.status).toBe("completed");
  });

  it("cancels a queued task and releases the pre-deduction", async () => {
    const run = await client.modelRuns.submit({ idempotency_key: "mr-2", inputs });
    const cancelled = await client.modelRuns.cancel(run.run_id);
    expect(cancelled).toMatchObject({
      status: "cancelled",
      settlement_status: "released",
      error_code: "user_cancelled",
    });
    expect(cancelled.released_amount).toBe(run.frozen_amount);
    expect((await client.modelRuns.waitForRun(run.run_id, fast)).status).toBe("cancelled");
  });

  it("lists tasks across pages and filters by status", async () => {
    for (let i = 0; i < 3; i++) await client.modelRuns.submit({ idempotency_key: `mr-list-${i}`, inputs });
    const all = await collect(client.modelRuns.listAll({}, { pageSize: 2 }));
    expect(all).toHaveLength(3);
    expect((await client.modelRuns.list({ page: 1, page_size: 2 })).total).toBe(3);
    expect(await collect(client.modelRuns.listAll({ status: "completed" }))).toHaveLength(0);
  });

  it("walks its list in pages of at most 100, the largest the API serves, whatever page size is asked", async () => {
    await client.modelRuns.submit({ idempotency_key: "mr-page", inputs });
    expect(await collect(client.modelRuns.listAll({}, { pageSize: 500 }))).toHaveLength(1);
    const listed = cloud.events.filter((e) => e.path.startsWith("/model-runs/list"));
    expect(listed.map((e) => e.path)).toEqual(["/model-runs/list?page=1&page_size=100"]);
  });

  it("checks frames per generation category before sending", async () => {
    await cloud.clearRequests();
    const err = await client.modelRuns
      .submit({
        idempotency_key: "mr-3",
        inputs: { ...inputs, generation_category: "first_last_frame_to_video", first_frame: "asset_abc" },
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(InputValidationError);
    expect(err.issues.map((i: { field: string }) => i.field)).toEqual([
      "inputs.last_frame",
      "inputs.first_frame",
    ]);
    expect(countCalls(await cloud.requests(), "/model-runs/videos")).toBe(0);
  });

  it("submits a first-frame task with an uploaded asset", async () => {
    const asset = await client.assets.upload(Buffer.from("89504e470d0a1a0a", "hex"), {
      filename: "frame.png",
      media_type: "image",
    });
    const run = await client.modelRuns.submit({
      idempotency_key: "mr-4",
      inputs: {
        ...inputs,
        generation_category: "first_frame_to_video",
        first_frame: { uri: asset.asset_uri, role: "first_frame", label: "@start" },
      },
    });
    expect(run.status).toBe("queued");
  });

  it("waits for a task that fails and finds the pre-deduction released", async () => {
    const run = await client.modelRuns.submit({
      idempotency_key: "mr-fail",
      inputs: { ...inputs, prompt: "FAIL on purpose" },
    });
    const done = client.modelRuns.waitForRun(run.run_id, fast);
    await tick();
    await cloud.advance(35);
    const failed = await done;
    expect(failed).toMatchObject({ status: "failed", settlement_status: "released" });
    expect(failed.error_code).not.toBe("");
    expect((await client.modelRuns.events(run.run_id)).items.map((e) => e.event_type)).toContain("failed");
  });

  it("validateInputs returns the inputs with labels normalised", () => {
    const checked = client.modelRuns.validateInputs({
      ...inputs,
      images: [{ uri: "https://x.test/a.png", label: " @hero" }],
    });
    expect(checked.images).toEqual([{ uri: "https://x.test/a.png", label: "hero" }]);
    expect(() => client.modelRuns.validateInputs({ prompt: "p" })).toThrow(InputValidationError);
  });

  it("reads an unknown run as NotFoundError", async () => {
    await expect(client.modelRuns.get("run_nope")).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.modelRuns.events("run_nope")).rejects.toBeInstanceOf(NotFoundError);
  });
});
