import {
  collect,
  EngineRejectionError,
  InputValidationError,
  NotFoundError,
  TimeoutError,
  type GpuCloudClient,
  type WorkflowDetail,
} from "pulumi-gpucloud/sdk";
import { countCalls, requiredInputs as inputsFor, startCloud, tick, type Cloud } from "./harness";

let cloud: Cloud;
let client: GpuCloudClient;
let plain: WorkflowDetail;
let external: WorkflowDetail;
const fast = { pollIntervalMs: 5, maxPollIntervalMs: 10 };

beforeAll(async () => {
  cloud = await startCloud();
  client = cloud.client();
  const details = await Promise.all(
    (await collect(client.workflows.marketListAll())).map((w) => client.workflows.info(w.workflow_id)),
  );
  plain = details.find((d) => !d.may_incur_external_model_cost)!;
  external = details.find((d) => d.may_incur_external_model_cost)!;
});
afterAll(() => cloud.close());
beforeEach(() => cloud.reset());

describe("workflow market", () => {
  it("lists the published workflows across pages", async () => {
    const all = await collect(client.workflows.marketListAll({}, { pageSize: 1 }));
    const page = await client.workflows.marketList({ page: 1, page_size: 1, sort: "latest" });
    expect(all.length).toBeGreaterThanOrEqual(2);
    expect(page.total).toBe(all.length);
    expect(new Set(all.map((w) => w.workflow_id)).size).toBe(all.length);
  });

  it("reads a workflow's manifest and revision", () => {
    expect(plain.revision_id).toEqual(expect.any(String));
    expect(plain.editable_parameter_manifest.length).toBeGreaterThan(0);
    expect(plain.quote_amount).toMatch(/^\d+(\.\d+)?$/);
  });

  it("reads an unknown workflow as NotFoundError", async () => {
    await expect(client.workflows.info("wf_nope")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("workflow runs", () => {
  it("submits, replays the same key, and waits for a terminal status", async () => {
    const inputs = await inputsFor(client, plain);
    const params = {
      workflow_id: plain.workflow_id,
      revision_id: plain.revision_id,
      inputs,
      idempotency_key: "wf-run-1",
    };
    const first = await client.workflows.submit(params, { detail: plain });
    expect(first).toMatchObject({ run_status: "queued", freeze_status: "frozen", idempotent_replay: false });
    const replay = await client.workflows.submit(params, { detail: plain });
    expect(replay).toMatchObject({ run_order_id: first.run_order_id, idempotent_replay: true });
    const done = client.workflows.waitForRun(first.run_order_id, fast);
    await tick();
    await cloud.advance(25);
    const run = await done;
    expect(run.run_status).toBe("succeeded");
    expect(run.total_cost).toMatch(/^\d+\.\d{8}$/);
    const execution = await client.workflows.execution(first.run_order_id);
    expect(execution.status).toEqual(expect.any(String));
    expect((await client.workflows.runInfo(first.run_order_id)).run_order_id).toBe(first.run_order_id);
    const listed = await collect(
      client.workflows.runListAll({ workflow_id: plain.workflow_id }, { pageSize: 1 }),
    );
    expect(listed.map((r) => r.run_order_id)).toEqual([first.run_order_id]);
    expect((await client.workflows.runList({ page: 1, page_size: 10 })).items).toHaveLength(1);
  });

  it("waits for a run that fails and reports its error", async () => {
    const inputs = await inputsFor(client, plain);
    const prompt = plain.editable_parameter_manifest.find(
      (p) => p.required && p.value_type === "string",
    )!.name;
    const { run_order_id } = await client.workflows.submit(
      {
        workflow_id: plain.workflow_id,
        inputs: { ...inputs, [prompt]: "FAIL please" },
        idempotency_key: "wf-fail",
      },
      { detail: plain },
    );
    const done = client.workflows.waitForRun(run_order_id, fast);
    await tick();
    await cloud.advance(25);
    const run = await done;
    expect(run.run_status).toBe("failed");
    expect(run.error_code).not.toBe("");
    expect(run.error_message).not.toBe("");
  });

  it("refuses bad inputs against the manifest before sending anything", async () => {
    await cloud.clearRequests();
    const err = await client.workflows
      .submit(
        { workflow_id: plain.workflow_id, inputs: { not_declared: 1 }, idempotency_key: "k" },
        { detail: plain },
      )
      .catch((e) => e);
    expect(err).toBeInstanceOf(InputValidationError);
    expect(err.issues[0]).toEqual({
      field: "inputs.not_declared",
      reason: expect.stringMatching(/not declared/),
    });
    expect(err.issues.length).toBeGreaterThan(1);
    expect(countCalls(await cloud.requests(), "/workflow/run/submit")).toBe(0);
  });

  it("requires accepting external model cost when the workflow may incur it", async () => {
    const inputs = await inputsFor(client, external);
    const params = { workflow_id: external.workflow_id, inputs, idempotency_key: "ext-1" };
    await expect(client.workflows.submit(params, { detail: external })).rejects.toMatchObject({
      issues: [{ field: "accept_external_cost_risk", reason: expect.stringMatching(/must be true/) }],
    });
    const accepted = await client.workflows.submit(
      { ...params, accept_external_cost_risk: true },
      { detail: external },
    );
    expect(accepted.run_order_id).toEqual(expect.any(String));
  });

  it("surfaces the engine's rejection of an undeclared input as EngineRejectionError", async () => {
    const inputs = { ...(await inputsFor(client, plain)), not_declared: 1 };
    const err = await client.workflows
      .submit({ workflow_id: plain.workflow_id, inputs, idempotency_key: "k2" })
      .catch((e) => e);
    expect(err).toBeInstanceOf(EngineRejectionError);
    expect(err.engineCode).toBe("INVALID_WORKFLOW_INPUT");
    expect(err.message).toMatch(/^Could not submit a run of workflow .*: the workflow engine rejected it: /);
  });

  it("times out waiting for a run with the last status seen", async () => {
    const { run_order_id } = await client.workflows.submit(
      { workflow_id: plain.workflow_id, inputs: await inputsFor(client, plain), idempotency_key: "k3" },
      { detail: plain },
    );
    const err = await client.workflows.waitForRun(run_order_id, { ...fast, timeoutMs: 30 }).catch((e) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.lastSeen).toBe("run_status queued");
  });
});
