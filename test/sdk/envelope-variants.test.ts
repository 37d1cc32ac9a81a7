/**
 * Envelope variants that public clients of the live service handle, end to end through the client: a
 * stand-in service answers in those shapes (the emulator answers in the documented ones).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  BusinessError,
  GpuCloudClient,
  NotFoundError,
  ServerError,
  type RequestEvent,
} from "pulumi-gpucloud/sdk";
import { foreignServer, json, type ForeignServer } from "./foreign-server";

type Route = (req: IncomingMessage, res: ServerResponse) => void;

describe("a service answering in the variants the live service is known for", () => {
  let server: ForeignServer;
  let client: GpuCloudClient;
  let events: RequestEvent[];
  const routes = new Map<string, Route>();
  const answer = (path: string, route: Route): void => {
    routes.set(path, route);
  };

  beforeAll(async () => {
    server = await foreignServer((req, res) => {
      const route = routes.get((req.url ?? "").split("?")[0].replace("/api/open/v2", ""));
      if (route) route(req, res);
      else
        json(res, 404, { code: 404, message: "no route", data: { error: "not_found", details: "no route" } });
    });
  });
  beforeEach(() => {
    routes.clear();
    server.hits.length = 0;
    events = [];
    client = new GpuCloudClient({
      baseUrl: server.url,
      apiKey: "sk-variants-test",
      retryBaseDelayMs: 1,
      retryMaxDelayMs: 5,
      onRequest: (e) => events.push(e),
    });
  });
  afterEach(() => client.close());
  afterAll(() => server.close());

  it('reads a success whose code is the string "0"', async () => {
    answer("/balance/info", (_q, res) =>
      json(res, 200, { code: "0", msg: "ok", data: { balance: 5, card_balance: 0 } }),
    );
    expect(await client.account.balance()).toEqual({ balance: 5, card_balance: 0 });
  });

  it("reads a missing resource answered with HTTP 200 and a non-zero code as NotFoundError", async () => {
    answer("/instance/info", (_q, res) => json(res, 200, { code: "-1", msg: "instance does not exist" }));
    answer("/instance/destroy", (_q, res) => json(res, 200, { code: -1, msg: "instance not found" }));
    await expect(client.instances.info("i-1")).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.instances.destroy("i-1")).resolves.toBeUndefined();
  });

  it("reads a refusal answered with HTTP 200 and code 1 as BusinessError, never resent", async () => {
    answer("/instance/create_by_pod", (_q, res) => json(res, 200, { code: 1, msg: "insufficient balance" }));
    const err = await client.instances
      .createByPod({ pod_uuid: "p", gpu_uuid: "g", gpu_nums: 1 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BusinessError);
    expect((err as BusinessError).message).toContain(
      "the API refused it: insufficient balance (HTTP 200, code 1)",
    );
    expect(server.hits).toHaveLength(1);
  });

  it('reads {"error": "..."} and {"error": {"message": ...}} bodies, retrying only the 5xx one', async () => {
    answer("/instance/update_title", (_q, res) => json(res, 400, { error: "title too long" }));
    let calls = 0;
    answer("/gpu/list", (_q, res) => {
      if (calls++ === 0) json(res, 503, { error: { message: "overloaded, try later" } });
      else json(res, 200, { code: 0, msg: "ok", data: { gpu_list: [], total: 0 } });
    });
    const refused = await client.instances.updateTitle("i-1", "t").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BusinessError);
    expect((refused as BusinessError).apiMessage).toBe("title too long");
    expect((await client.catalogue.gpus()).total).toBe(0);
    expect(events.filter((e) => e.path === "/gpu/list").map((e) => e.status)).toEqual([503, 200]);
    expect(events.find((e) => e.status === 503)?.error).toContain(
      "the service failed: overloaded, try later",
    );
  });

  it("reads a system error answered with HTTP 200 and code -2 as a ServerError, and retries a read", async () => {
    let calls = 0;
    answer("/balance/info", (_q, res) => {
      if (calls++ === 0) json(res, 200, { code: -2, msg: "system error" });
      else json(res, 200, { code: 0, msg: "ok", data: { balance: 1, card_balance: 0 } });
    });
    expect((await client.account.balance()).balance).toBe(1);
    expect(events[0].error).toMatch(/^Could not read the account balance: the service failed/);
    const never = new GpuCloudClient({ baseUrl: server.url, maxRetries: 0 });
    calls = 0;
    await expect(never.account.balance()).rejects.toBeInstanceOf(ServerError);
    await never.close();
  });

  it('reports the run status "canceled" as "cancelled", ending waits, and sends filters in the documented spelling', async () => {
    const run = { run_id: "r1", status: "canceled", settlement_status: "released" };
    answer("/model-runs/list", (_q, res) =>
      json(res, 200, { code: 0, msg: "ok", data: { total: 1, items: [run] } }),
    );
    answer("/model-runs/events", (_q, res) =>
      json(res, 200, {
        code: 0,
        msg: "ok",
        data: { items: [{ event_type: "canceled", run_status: "canceled" }] },
      }),
    );
    answer("/workflow/run/info", (_q, res) =>
      json(res, 200, { code: 0, msg: "ok", data: { run_order_id: "o1", run_status: "canceled" } }),
    );
    expect((await client.modelRuns.waitForRun("r1", { pollIntervalMs: 1 })).status).toBe("cancelled");
    expect((await client.modelRuns.events("r1")).items).toEqual([
      { event_type: "cancelled", run_status: "cancelled" },
    ]);
    expect((await client.workflows.waitForRun("o1", { pollIntervalMs: 1 })).run_status).toBe("cancelled");
    await client.modelRuns.list({ status: "canceled" });
    expect(server.hits.at(-1)).toBe("GET /api/open/v2/model-runs/list?status=cancelled");
  });
});
