/**
 * The gRPC status each kind of failure reaches the engine with, through the plugin's own server: a
 * definite failure (refused, nothing made or changed) a code the engine reads as understood, UNKNOWN only
 * where the outcome really is unknown, INTERNAL for a fault of the provider's own. Each case also checks
 * the cloud, so that the code is seen to tell the truth. Cancel and a resource made but not finished are
 * checked beside their behaviour (cancel.test.ts, init-failure.test.ts).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { status } from "@grpc/grpc-js";
import { z } from "zod";
import { userOfKeySpec } from "pulumi-gpucloud/emulator";
import * as sdk from "pulumi-gpucloud/sdk";
import { defineResource } from "../../provider/framework/define-resource";
import { FAILURE_CODES, failureCode } from "../../provider/failure-codes";
import { serveNativeProvider } from "../../provider/native/server";
import { REPO_ROOT } from "../harness";
import { onCalls } from "../support/emulator-hooks";
import { foreignServer, json, POD_PAGE } from "../sdk/foreign-server";
import { API_KEY, startNativeCloud, type NativeCloud } from "./cloud";
import { CallError, PluginClient, PluginProcess, secret, type Props } from "./plugin";

jest.setTimeout(120_000);

async function failure(call: Promise<unknown>): Promise<CallError> {
  const err = await call.then(
    () => new Error("the call succeeded"),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CallError);
  return err as CallError;
}

describe("the code the engine receives, through the plugin's gRPC server", () => {
  let c: NativeCloud;
  /** 0.5 s requests: a lost answer settles within a second or two of the real clock. */
  const settings = { requestTimeoutMs: "500" };
  const configure = async (more: Props = {}) => {
    const { inputs } = await c.plugin.client.checkConfig({ ...c.config, ...settings, ...more });
    await c.plugin.client.configure(inputs);
  };
  beforeAll(async () => {
    c = await startNativeCloud();
    await configure();
  });
  afterAll(async () => {
    await c?.stop();
  });
  afterEach(async () => {
    await c.emu.admin("DELETE", "/faults");
  });

  const client = () => c.plugin.client;
  const emulator = () => c.emu.running.emulator;
  const creates = async () => (await c.calls())["POST /instance/create_by_pod"] ?? 0;
  const instanceInputs = async (more: Props = {}, olds?: Props) =>
    (await client().check("Instance", { ...c.spec, ...more }, "r", { olds })).inputs;
  const made = async (title: string) => {
    const inputs = await instanceInputs({ title });
    return { inputs, ...(await c.advancing(client().create("Instance", inputs))) };
  };
  /** Runs `act` when a call of `path` reaches the cloud, before its faults are met. */
  const whenCalled = (apiPath: string, act: () => void) =>
    onCalls(emulator(), (call) => {
      if (call.path === apiPath) act();
    });
  const failingReads = () => {
    for (const apiPath of ["/instance/list", "/instance/info"])
      emulator().faults.add({ path: apiPath, kind: "http_503", probability: 1 });
  };

  describe("definite failures: refused, nothing made or changed", () => {
    it("a create the cloud refuses (pod not found): NOT_FOUND, nothing made", async () => {
      const before = await c.instanceUuids();
      const err = await failure(client().create("Instance", await instanceInputs({ podUuid: "pod-gone" })));
      expect(err.code).toBe(status.NOT_FOUND);
      expect(err.message).toMatch(/^Could not create instance from pod pod-gone: it does not exist/);
      expect(await c.instanceUuids()).toEqual(before);
    });

    it("a create the cloud refuses for the balance: FAILED_PRECONDITION, nothing made", async () => {
      const before = await c.instanceUuids();
      const balance = `/users/${userOfKeySpec(API_KEY)}/balance`;
      await c.emu.admin("PUT", balance, { balance: 0 });
      try {
        const err = await failure(client().create("Instance", await instanceInputs()));
        expect(err.code).toBe(status.FAILED_PRECONDITION);
        expect(err.message).toContain("insufficient balance");
      } finally {
        await c.emu.admin("PUT", balance, { balance: 1000 });
      }
      expect(await c.instanceUuids()).toEqual(before);
    });

    it("an input the API refuses before anything is sent (gpuNums 3 past Check): INVALID_ARGUMENT", async () => {
      const before = await creates();
      const err = await failure(client().create("Instance", { ...(await instanceInputs()), gpuNums: 3 }));
      expect(err.code).toBe(status.INVALID_ARGUMENT);
      expect(err.message).toContain("gpu_nums: must be one of 1, 2, 4, 8, got 3");
      expect(await creates()).toBe(before);
    });

    it("an update of an instance the cloud no longer lists: NOT_FOUND", async () => {
      const olds = await instanceInputs({ title: "a" });
      const news = await instanceInputs({ title: "b" }, olds);
      const err = await failure(client().update("Instance", "ins-gone", olds, news));
      expect(err.code).toBe(status.NOT_FOUND);
      expect(err.message).toMatch(/^Could not read instance ins-gone: it is not in the instance list/);
    });

    it("the provider's own verdict that explains a NotFound (an adoption of nothing): NOT_FOUND", async () => {
      const err = await failure(
        client().create("Instance", await instanceInputs({ adoptInstanceUuid: "ins-gone" })),
      );
      expect(err.code).toBe(status.NOT_FOUND);
      expect(err.message).toMatch(/^Could not adopt instance ins-gone: it does not exist/);
    });

    it("the provider's own verdict (a create that timed out, its instance destroyed): FAILED_PRECONDITION", async () => {
      const before = await c.instanceUuids();
      // The emulator's clock stands still: the instance never runs within the second it is given.
      const err = await failure(client().create("Instance", await instanceInputs({ waitTimeoutSeconds: 1 })));
      expect(err.code).toBe(status.FAILED_PRECONDITION);
      expect(err.message).toMatch(/was destroyed so nothing is left billing\.$/);
      expect(await c.instanceUuids()).toEqual(before);
    });

    it("a key the cloud refuses: UNAUTHENTICATED", async () => {
      await configure({ apiKey: secret("not-a-key-of-this-cloud") });
      try {
        const err = await failure(client().create("Instance", await instanceInputs()));
        expect(err.code).toBe(status.UNAUTHENTICATED);
        expect(err.message).toContain("Check the API key");
      } finally {
        await configure();
      }
    });

    it("a rate limit longer than the create may wait: RESOURCE_EXHAUSTED, sent once", async () => {
      const cloud = await foreignServer((req, res) => {
        const answered = (req.url ?? "").split("?")[0];
        if (answered.endsWith("/pod/list")) return json(res, 200, POD_PAGE);
        if (answered.endsWith("/instance/list"))
          return json(res, 200, { code: 0, msg: "success", data: { instance_list: [], total: 0 } });
        json(res, 429, { code: 429, msg: "too many requests" }, { "retry-after": "3600" });
      });
      await configure({ baseUrl: cloud.url });
      try {
        const err = await failure(client().create("Instance", await instanceInputs()));
        expect(err.code).toBe(status.RESOURCE_EXHAUSTED);
        expect(err.message).toMatch(/no instance was made/);
        expect(cloud.hits.filter((hit) => hit.includes("/instance/create_by_pod"))).toHaveLength(1);
      } finally {
        await configure();
        await cloud.close();
      }
    });

    it("a call safe to repeat that the cloud keeps failing (503): UNAVAILABLE, nothing changed", async () => {
      const instance = await made("before");
      await c.emu.admin("POST", "/faults", {
        path: "/instance/update_title",
        kind: "http_503",
        probability: 1,
      });
      const news = await instanceInputs({ title: "after" }, instance.inputs);
      const err = await failure(client().update("Instance", instance.id, instance.outputs, news));
      expect(err.code).toBe(status.UNAVAILABLE);
      expect((await c.api.instances.info(instance.id)).title).toBe("before");
    });

    it("a power change both of whose calls did nothing: UNAVAILABLE, the instance as it was", async () => {
      const instance = await made("stays-on");
      await c.emu.admin("POST", "/faults", { path: "/instance/shutdown", kind: "reset", count: 2 });
      const news = await instanceInputs({ title: "stays-on", running: false }, instance.inputs);
      const err = await failure(
        c.advancing(client().update("Instance", instance.id, instance.outputs, news)),
      );
      expect(err.code).toBe(status.UNAVAILABLE);
      expect(err.message).toContain("the answers to both shutdown calls were lost");
      expect((await c.api.instances.info(instance.id)).status).toBe(2);
    });

    it("a wait that runs out after a delete was accepted: DEADLINE_EXCEEDED", async () => {
      const instance = await made("going");
      failingReads();
      const outputs = { ...instance.outputs, waitTimeoutSeconds: 1 };
      const err = await failure(client().delete("Instance", instance.id, outputs));
      expect(err.code).toBe(status.DEADLINE_EXCEEDED);
      expect(err.message).toMatch(/^Could not delete instance \S+: it is still listed 1 s after destroy/);
    });

    it("a provider never configured, with no key in its environment: FAILED_PRECONDITION", async () => {
      const unconfigured = await PluginProcess.start();
      try {
        const err = await failure(unconfigured.client.create("Instance", await instanceInputs()));
        expect(err.code).toBe(status.FAILED_PRECONDITION);
        expect(err.message).toMatch(/^The GPU cloud base URL is not set\..*GPUCLOUD_BASE_URL/);
      } finally {
        await unconfigured.stop();
      }
    });
  });

  describe("outcomes that are not known", () => {
    it("a power change whose lost answer cannot be settled (the instance unreadable): UNKNOWN", async () => {
      const instance = await made("unsettled");
      await c.emu.admin("POST", "/faults", { path: "/instance/shutdown", kind: "reset", count: 1 });
      const undo = whenCalled("/instance/shutdown", failingReads);
      try {
        const news = await instanceInputs(
          { title: "unsettled", running: false, waitTimeoutSeconds: 1 },
          instance.inputs,
        );
        const err = await failure(client().update("Instance", instance.id, instance.outputs, news));
        expect(err.code).toBe(status.UNKNOWN);
        expect(err.message).toContain("so whether the call took effect cannot be told");
        expect(err.initFailure).toBeUndefined();
      } finally {
        undo();
      }
    });

    it("a create whose answer was lost and whose outcome stays unknown: UNKNOWN with the pending record", async () => {
      await c.emu.admin("POST", "/faults", {
        path: "/instance/create_by_pod",
        kind: "drop_after_commit",
        count: 1,
      });
      const undo = whenCalled("/instance/create_by_pod", failingReads);
      try {
        const inputs = await instanceInputs({ title: "pending", waitTimeoutSeconds: 1 });
        const err = await failure(client().create("Instance", inputs));
        expect(err.code).toBe(status.UNKNOWN);
        expect(err.initFailure?.id).toMatch(/^pending-create:\d+:[0-9a-f]{8}$/);
        expect(err.initFailure?.properties.pendingCreate).toMatchObject({ reason: expect.any(String) });
      } finally {
        undo();
      }
    });
  });
});

describe("a fault of the provider's own, through the plugin's gRPC server", () => {
  const faulty = defineResource({
    name: "Faulty",
    description: "A resource whose create has a bug.",
    id: "its number",
    example: [],
    inputs: z.object({ size: z.number().describe("Its size.") }),
    outputs: {},
    async create(): Promise<never> {
      throw new TypeError("Cannot read properties of undefined (reading 'status')");
    },
    async read() {
      return undefined;
    },
    async delete() {},
    async import(): Promise<never> {
      throw new Error("no import");
    },
  });

  it("answers INTERNAL: how far it got is not known", async () => {
    const provider = await serveNativeProvider({ definitions: [faulty] });
    const client = new PluginClient(provider.port);
    try {
      await client.configure({ apiKey: secret("k-never-used"), baseUrl: "http://127.0.0.1:1" });
      const err = await failure(client.create("Faulty", { size: 1 }));
      expect(err.code).toBe(status.INTERNAL);
      expect(err.message).toBe("Cannot read properties of undefined (reading 'status')");
    } finally {
      client.close();
      await provider.close();
    }
  });
});

describe("the table of failure codes", () => {
  it("is the table docs/failure-behaviour.md shows", () => {
    const page = fs.readFileSync(path.join(REPO_ROOT, "docs", "failure-behaviour.md"), "utf8");
    const rows = FAILURE_CODES.map(
      ({ failure: kind, code, meaning }) => `| \`${kind.name}\` | \`${status[code]}\` | ${meaning} |`,
    );
    expect(page).toContain(rows.join("\n"));
  });

  it("gives every error class of the SDK a row of its own", () => {
    const exported: unknown[] = Object.values(sdk);
    const classes = exported.filter(
      (value): value is typeof sdk.GpuCloudError =>
        typeof value === "function" &&
        (value === sdk.GpuCloudError || value.prototype instanceof sdk.GpuCloudError),
    );
    const listed = new Set<unknown>(FAILURE_CODES.map((row) => row.failure));
    expect(classes.filter((kind) => !listed.has(kind)).map((kind) => kind.name)).toEqual([]);
    expect(classes.length).toBeGreaterThan(10);
  });

  it("answers a plain Error as the provider's verdict, or as the failure it names as its cause", () => {
    expect(failureCode(new Error("refused"))).toBe(status.FAILED_PRECONDITION);
    const lost = new sdk.OutcomeUnknownError({
      action: "stop instance",
      method: "POST",
      path: "/x",
      message: "lost",
    });
    expect(failureCode(new Error("could not stop", { cause: lost }))).toBe(status.UNKNOWN);
    const twice = new Error("outer", { cause: new Error("inner", { cause: lost }) });
    expect(failureCode(twice)).toBe(status.UNKNOWN);
    expect(failureCode(new Error("outer", { cause: "a string" }))).toBe(status.FAILED_PRECONDITION);
  });

  it("answers anything else thrown as INTERNAL", () => {
    expect(failureCode(new RangeError("Invalid array length"))).toBe(status.INTERNAL);
    expect(failureCode("a string")).toBe(status.INTERNAL);
    expect(failureCode(undefined)).toBe(status.INTERNAL);
  });
});
