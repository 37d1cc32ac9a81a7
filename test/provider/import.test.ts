/**
 * Read by id alone (`pulumi import`, `get`): dynamic providers never reach it, the native plugin will.
 * The inputs it answers must pass check and show no diff against the state it answers.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import type { ProviderContext } from "../../provider/framework/context";
import { ProcessMemory } from "../../provider/framework/process-memory";
import { GpuCloudClient } from "../../sdk";
import { stateOutputs, type AnyResourceDefinition } from "../../provider/framework/define-resource";
import { idleClosePolicy } from "../../provider/resources/idle-close-policy";
import { instance } from "../../provider/resources/instance/definition";
import { personalImage } from "../../provider/resources/personal-image";
import { DEMO_KEY } from "../emulator/helpers";
import { startWorld, type World } from "../support/world";

describe("import by id", () => {
  let w: World;
  let ctx: ProviderContext;
  beforeAll(async () => {
    w = await startWorld();
    ctx = {
      api: w.api,
      settings: {
        baseUrl: w.emu.url,
        apiKey: DEMO_KEY,
        pollIntervalMs: 10,
        requestTimeoutMs: 30_000,
        sharedAccount: true,
      },
      process: new ProcessMemory(),
      progress: () => undefined,
    };
  });
  afterAll(() => w.stop());
  beforeEach(() => w.emu.admin("POST", "/reset"));

  /** Imports `id`, then asserts that check keeps its inputs and that they diff as no change. */
  async function imported(definition: AnyResourceDefinition, id: string): Promise<Record<string, unknown>> {
    const state = await definition.import(ctx, id);
    const kind = definition.name;
    const checked = await w.h.check(kind, state.inputs);
    expect(checked).toEqual({ inputs: state.inputs, failures: [] });
    const diff = await w.h.diff(kind, id, stateOutputs(definition, state), checked.inputs);
    expect(diff).toMatchObject({ changes: "none", replaces: [] });
    return state.inputs;
  }

  const created = async (inputs: Record<string, unknown>) =>
    w.advancing(w.h.create("Instance", await w.h.checked("Instance", inputs)));

  it("takes an instance made from a pod as podUuid and podTag, with its title and power state", async () => {
    const { id } = await created({ ...w.spec, title: "made elsewhere" });
    const pod = (await w.api.catalogue.pods({ page: 1, page_size: 100 })).pod_list.find(
      (p) => p.uuid === w.podUuid,
    )!;
    expect(await imported(instance, id)).toEqual({
      podUuid: w.podUuid,
      podTag: pod.pod_tag?.at(-1),
      gpuUuid: w.gpu4090,
      gpuNums: 1,
      title: "made elsewhere",
      running: true,
      waitTimeoutSeconds: 900,
      waitForServices: false,
    });
  });

  it("takes an instance made from a market image as imageUuid, and a stopped one as running: false", async () => {
    const [image] = (await w.api.catalogue.marketImages({ page: 1, page_size: 1 })).image_list;
    const { id, outputs } = await created({
      imageUuid: image.uuid,
      gpuUuid: w.gpu5090,
      gpuNums: 2,
      running: false,
    });
    expect(await imported(instance, id)).toEqual({
      imageUuid: image.uuid,
      gpuUuid: w.gpu5090,
      gpuNums: 2,
      title: outputs.title,
      running: false,
      waitTimeoutSeconds: 900,
      waitForServices: false,
    });
  });

  it("takes an untitled instance made in the console with an explicitly empty title, so nothing changes", async () => {
    const made = await w.api.instances.createByPod({ pod_uuid: w.podUuid, gpu_uuid: w.gpu4090, gpu_nums: 1 });
    const inputs = await imported(instance, made.instance_uuid);
    expect(inputs.title).toBe("");
    // Left out of the program afterwards, the title becomes the resource's owner mark.
    const named = await w.h.check("Instance", { ...inputs, title: undefined }, inputs);
    expect(named.inputs.title).toMatch(/^test-[0-9a-f]{7}$/);
  });

  it("refuses an instance that does not exist, saying so", async () => {
    await expect(instance.import(ctx, "ins-nope")).rejects.toThrow(
      "Could not import instance ins-nope: it does not exist or belongs to another user.",
    );
  });

  it("takes an idle policy with the settings the cloud reports, and refuses an instance without one", async () => {
    const { id } = await created(w.spec);
    await expect(idleClosePolicy.import(ctx, id)).rejects.toThrow(/it has none/);
    await w.h.create(
      "IdleClosePolicy",
      await w.h.checked("IdleClosePolicy", { instanceUuid: id, idlePeriodMinutes: 60, gpuThreshold: 20 }),
    );
    expect(await imported(idleClosePolicy, id)).toEqual({
      instanceUuid: id,
      idlePeriodMinutes: 60,
      destroyOnIdle: false,
      gpuThreshold: 20,
      memoryThreshold: 0,
    });
  });

  describe("from a cloud that does not report every field (the emulator behind a proxy that drops them)", () => {
    /** The emulator's answers without the fields `dropped` names: `idle_close` is not in the API's spec. */
    async function reportingWithout(dropped: string[], work: (api: GpuCloudClient) => Promise<void>) {
      const drop = (value: unknown): unknown => {
        if (Array.isArray(value)) return value.map(drop);
        if (value === null || typeof value !== "object") return value;
        const kept = Object.entries(value).filter(([key]) => !dropped.includes(key));
        return Object.fromEntries(kept.map(([key, v]) => [key, drop(v)]));
      };
      await rewriting(drop, work);
    }

    /** The emulator's answers with every field named `key` set to `value` (a value the cloud could report). */
    async function reportingAs(key: string, value: unknown, work: (api: GpuCloudClient) => Promise<void>) {
      const set = (v: unknown): unknown => {
        if (Array.isArray(v)) return v.map(set);
        if (v === null || typeof v !== "object") return v;
        return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === key ? value : set(x)]));
      };
      await rewriting(set, work);
    }

    /** The emulator behind a proxy that passes each answer's JSON through `transform`. */
    async function rewriting(
      transform: (value: unknown) => unknown,
      work: (api: GpuCloudClient) => Promise<void>,
    ) {
      const proxy = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", async () => {
          const answer = await fetch(new URL(req.url!, w.emu.url).href.replace(/\/+$/, ""), {
            method: req.method,
            headers: { authorization: req.headers.authorization ?? "", "content-type": "application/json" },
            body: req.method === "GET" ? undefined : Buffer.concat(chunks),
          });
          res.writeHead(answer.status, {
            "content-type": "application/json",
            date: answer.headers.get("date")!,
          });
          res.end(JSON.stringify(transform(await answer.json())));
        });
      });
      await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
      const base = new URL(w.emu.url);
      base.port = String((proxy.address() as AddressInfo).port);
      try {
        await work(new GpuCloudClient({ baseUrl: base.href.replace(/\/+$/, ""), apiKey: DEMO_KEY }));
      } finally {
        proxy.closeAllConnections();
        await new Promise((resolve) => proxy.close(resolve));
      }
    }

    it("refuses an idle policy whose settings it cannot read, saying so, and refresh keeps the declared ones", async () => {
      const { id } = await created(w.spec);
      const declared = { instanceUuid: id, idlePeriodMinutes: 60, gpuThreshold: 20 };
      const policy = await w.h.create("IdleClosePolicy", await w.h.checked("IdleClosePolicy", declared));
      await reportingWithout(["idle_close"], async (api) => {
        await expect(idleClosePolicy.import({ ...ctx, api }, id)).rejects.toThrow(
          `Could not import the idle policy of instance ${id}: the cloud does not report idle policies, so its settings cannot be read.`,
        );
        const olds = policy.inputs as Parameters<typeof idleClosePolicy.read>[2];
        const read = await idleClosePolicy.read({ ...ctx, api }, id, olds, policy.outputs);
        expect(read?.inputs).toEqual(policy.inputs);
      });
    });

    it.each(["image_uuid", "gpu_uuid", "gpu_nums"])(
      "refuses an instance whose %s it does not report, rather than guess the inputs",
      async (field) => {
        const { id } = await created(w.spec);
        await reportingWithout([field], async (api) => {
          await expect(instance.import({ ...ctx, api }, id)).rejects.toThrow(
            `Could not import instance ${id}: the cloud does not report its image, GPU model or GPU count`,
          );
        });
      },
    );

    it("refuses an instance whose GPU count the resource does not accept, naming the field and the rule", async () => {
      const { id } = await created(w.spec);
      await reportingAs("gpu_nums", 3, async (api) => {
        const err = await instance.import({ ...ctx, api }, id).catch((e: unknown) => e as Error);
        expect(err).toBeInstanceOf(Error);
        expect((err as Error).message).toBe(
          `Could not import instance ${id}: the cloud reports values the Instance resource does not accept ` +
            "(gpuNums must be one of 1, 2, 4, 8), so it cannot be imported as is. Adopt it with adoptInstanceUuid " +
            "and valid inputs instead, or change it in the console first.",
        );
      });
    });
  });

  it("takes a personal image as adopted by its uuid", async () => {
    const { id } = await created(w.spec);
    const image = await w.advancing(w.api.images.saveFromInstance(id, { pollIntervalMs: 10 }), 20);
    expect(await imported(personalImage, image.uuid)).toEqual({
      adoptImageUuid: image.uuid,
      waitTimeoutSeconds: 900,
    });
    await expect(personalImage.import(ctx, "img-nope")).rejects.toThrow(/not in your personal image list/);
  });
});
