/**
 * The native plugin's lifecycle over gRPC against the emulator, as the engine drives it: the plugin runs
 * as its own process (the built bin), configured with a secret key, and every answer it gives and every
 * line it prints is scanned for that key at the end.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { REPO_ROOT } from "../harness";
import { API_KEY, startNativeCloud, type NativeCloud } from "./cloud";
import { CallError, isSecret, revealed, secret, UNKNOWN, type Props } from "./plugin";

/** What the engine keeps of a resource between calls. */
interface Stored {
  id: string;
  inputs: Props;
  outputs: Props;
}

describe("the native plugin over gRPC against the emulator", () => {
  let c: NativeCloud;
  beforeAll(async () => {
    c = await startNativeCloud();
  });
  afterAll(async () => {
    await c?.stop();
  });

  /** Check, then create with the checked inputs, as the engine does; the frozen clock moves meanwhile. */
  async function created(kind: string, inputs: Props): Promise<Stored> {
    const checked = await c.plugin.client.check(kind, inputs);
    expect(checked.failures).toEqual([]);
    const { id, outputs } = await c.advancing(c.plugin.client.create(kind, checked.inputs));
    return { id, inputs: checked.inputs, outputs };
  }

  /** Diff, then update in place, as the engine does for a diff without replacements. */
  async function updated(kind: string, state: Stored, inputs: Props): Promise<Stored> {
    const checked = await c.plugin.client.check(kind, inputs);
    const diff = await c.plugin.client.diff(kind, state.id, state.outputs, checked.inputs);
    expect(diff.replaces).toEqual([]);
    const outputs = await c.advancing(c.plugin.client.update(kind, state.id, state.outputs, checked.inputs));
    return { id: state.id, inputs: checked.inputs, outputs };
  }

  describe("schema and configuration", () => {
    it("prints its port alone as the first line and nothing else on stdout", () => {
      expect(c.plugin.stdout).toBe(`${c.plugin.client.port}\n`);
    });

    it("answers GetPluginInfo with the package's version and GetSchema with schema.json", async () => {
      const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
      expect(await c.plugin.client.pluginVersion()).toBe(manifest.version);
      expect(await c.plugin.client.schema()).toBe(
        fs.readFileSync(path.join(REPO_ROOT, "schema.json"), "utf8"),
      );
    });

    it("checks stack config given as text, keeps the key secret, and accepts secrets and previews", async () => {
      // A lost create answer is settled in a few request timeouts (the claim alone waits two): 2 s keeps that short.
      const checked = await c.plugin.client.checkConfig({
        ...c.config,
        requestTimeoutMs: "2000",
        version: "0.1.0",
      });
      expect(checked.failures).toEqual([]);
      expect(checked.inputs.apiKey).toEqual(c.config.apiKey);
      expect(checked.inputs).toMatchObject({ baseUrl: c.emu.url, pollIntervalMs: "10", version: "0.1.0" });
      expect(await c.plugin.client.configure(checked.inputs)).toMatchObject({
        acceptsecrets: true,
        supportspreview: true,
        acceptresources: false,
        acceptoutputs: false,
        supportsAutonamingConfiguration: true,
      });
    });

    it("answers an empty conversion mapping", async () => {
      expect(await c.plugin.client.mapping("terraform")).toEqual({ provider: "", data: "" });
    });

    it("answers the Handshake of an engine that booted it as Configure answered", async () => {
      // The engine passes the plugin's folder as both directories, and its address once more.
      const shook = await c.plugin.client.handshake("127.0.0.1:1", path.join(REPO_ROOT, "plugin"));
      expect(shook).toEqual({
        acceptSecrets: true,
        acceptResources: false,
        acceptOutputs: false,
        supportsAutonamingConfiguration: true,
      });
    });
  });

  describe("an instance from preview to delete", () => {
    let instance: Stored;

    it("checks inputs with the dynamic provider's failures, and lets a preview's unknowns through", async () => {
      const bad = await c.plugin.client.check("Instance", { ...c.spec, gpuNums: 3, extra: 1 });
      expect(bad.failures).toEqual([
        { property: "gpuNums", reason: "gpuNums must be one of 1, 2, 4, 8, got 3" },
        expect.objectContaining({
          property: "extra",
          reason: expect.stringMatching(/^extra is not an input/),
        }),
      ]);
      // A secret input's failure states the rule, never the value.
      const hidden = await c.plugin.client.check("Instance", {
        ...c.spec,
        gpuNums: secret(3),
        title: secret(7),
        shutdownAt: secret("teatime-2031"),
      });
      expect(hidden.failures).toEqual([
        { property: "gpuNums", reason: "gpuNums must be one of 1, 2, 4, 8, got a secret value" },
        { property: "title", reason: "title must be a string, got a secret value" },
        {
          property: "shutdownAt",
          reason: expect.stringMatching(/^shutdownAt must be Unix seconds .*, got a secret value$/),
        },
      ]);
      expect(JSON.stringify(hidden.failures)).not.toContain("teatime");
      const past = await c.plugin.client.check("Instance", { ...c.spec, shutdownAt: secret(1_600_000_000) });
      expect(past.failures).toEqual([
        {
          property: "shutdownAt",
          reason: "shutdownAt must be in the future (the value is secret, so it is not shown)",
        },
      ]);
      const previewed = await c.plugin.client.check("Instance", { ...c.spec, gpuUuid: UNKNOWN });
      expect(previewed).toEqual({
        inputs: {
          ...c.spec,
          gpuUuid: UNKNOWN,
          title: expect.stringMatching(/^r-[0-9a-f]{7}$/),
          running: true,
          waitForServices: false,
          waitTimeoutSeconds: 900,
        },
        failures: [],
      });
    });

    it("previews a create without any API call: inputs as given, the cloud's outputs unknown", async () => {
      const before = await c.calls();
      const checked = await c.plugin.client.check("Instance", { ...c.spec, title: "planned" });
      const { id, outputs } = await c.plugin.client.create("Instance", checked.inputs, { preview: true });
      expect(id).toBe("");
      expect(outputs).toMatchObject({
        ...checked.inputs,
        title: "planned",
        instanceUuid: UNKNOWN,
        status: UNKNOWN,
      });
      expect(isSecret(outputs.sshPasswords) && outputs.sshPasswords.value).toBe(UNKNOWN);
      expect(await c.calls()).toEqual(before);
    });

    it("creates it: every output read off the cloud, the SSH passwords secret, no provider code in state", async () => {
      instance = await created("Instance", { ...c.spec, title: "native-0" });
      expect(await c.instanceUuids()).toEqual([instance.id]);
      expect(instance.outputs).toMatchObject({
        instanceUuid: instance.id,
        title: "native-0",
        statusName: "running",
        running: true,
        gpuName: "4090D",
      });
      expect(isSecret(instance.outputs.sshPasswords)).toBe(true);
      expect(Object.keys(instance.outputs)).not.toContain("__provider");
    });

    it("imports it by id alone: inputs that pass check and diff as no change", async () => {
      const imported = await c.plugin.client.read("Instance", instance.id);
      expect(imported.id).toBe(instance.id);
      expect(imported.inputs).toEqual({
        podUuid: c.podUuid,
        podTag: expect.any(String),
        gpuUuid: c.gpu4090,
        gpuNums: 1,
        title: "native-0",
        running: true,
        waitForServices: false,
        waitTimeoutSeconds: 900,
      });
      const checked = await c.plugin.client.check("Instance", imported.inputs);
      expect(checked).toEqual({ inputs: imported.inputs, failures: [] });
      const diff = await c.plugin.client.diff("Instance", instance.id, imported.outputs, checked.inputs);
      expect(diff).toMatchObject({ changes: "none", replaces: [], diffs: [] });
      // The program that made it leaves podTag out (the latest at creation): after `pulumi import` takes
      // the instance over, its next up must not replace it for the tag the import recorded.
      const program = (await c.plugin.client.check("Instance", { ...c.spec, title: "native-0" })).inputs;
      expect(program.podTag).toBeUndefined();
      const afterImport = await c.plugin.client.diff("Instance", instance.id, imported.outputs, program);
      expect(afterImport).toMatchObject({ changes: "none", replaces: [] });
      // Another tag does replace it.
      const retagged = await c.plugin.client.diff("Instance", instance.id, imported.outputs, {
        ...program,
        podTag: "v0.0.1-other",
      });
      expect(retagged).toMatchObject({ changes: "some", replaces: ["podTag"] });
    });

    it("refreshes without drift, then shows a title changed in the console as drift", async () => {
      const same = await c.plugin.client.read("Instance", instance.id, instance.outputs, instance.inputs);
      expect(revealed(same.outputs)).toEqual(revealed(instance.outputs));
      await c.api.instances.updateTitle(instance.id, "renamed-by-hand");
      const drifted = await c.plugin.client.read("Instance", instance.id, instance.outputs, instance.inputs);
      expect(drifted.outputs.title).toBe("renamed-by-hand");
      expect(drifted.inputs.title).toBe("renamed-by-hand");
      instance = { ...instance, inputs: drifted.inputs, outputs: drifted.outputs };
    });

    it("diffs the program against the drift with a detailed diff, and repairs it in place", async () => {
      const news = (await c.plugin.client.check("Instance", { ...c.spec, title: "native-0" })).inputs;
      const diff = await c.plugin.client.diff("Instance", instance.id, instance.outputs, news);
      expect(diff).toMatchObject({
        changes: "some",
        diffs: ["title"],
        replaces: [],
        detailedDiff: { title: { kind: "UPDATE", inputDiff: true } },
        deleteBeforeReplace: false,
      });
      expect(diff.stables).toEqual(
        expect.arrayContaining(["instanceUuid", "podUuid", "gpuNums", "createTime"]),
      );
      expect(diff.stables).not.toContain("title");
      // A start may move the instance to a fallback model (gpu-fallback.test.ts): its model is no stable output.
      expect(diff.stables).not.toContain("gpuName");
      expect(diff.stables).not.toContain("runningGpuUuid");
      instance = await updated("Instance", instance, { ...c.spec, title: "native-0" });
      expect(instance.outputs.title).toBe("native-0");
    });

    it("previews an update without any API call: stable outputs kept, the others unknown", async () => {
      const before = await c.calls();
      const news = (await c.plugin.client.check("Instance", { ...c.spec, title: "native-0", running: false }))
        .inputs;
      const outputs = await c.plugin.client.update("Instance", instance.id, instance.outputs, news, {
        preview: true,
      });
      expect(outputs).toMatchObject({
        running: false,
        instanceUuid: instance.id,
        createTime: instance.outputs.createTime,
        gpuName: UNKNOWN,
        runningGpuUuid: UNKNOWN,
        status: UNKNOWN,
        statusName: UNKNOWN,
      });
      expect(await c.calls()).toEqual(before);
    });

    it("stops it in place when running becomes false", async () => {
      instance = await updated("Instance", instance, { ...c.spec, title: "native-0", running: false });
      expect(instance.outputs).toMatchObject({ running: false, statusName: "stopped" });
    });

    it("plans a replacement when the GPU count changes, with the kind of each change", async () => {
      const news = (
        await c.plugin.client.check("Instance", { ...c.spec, gpuNums: 2, title: "native-0", running: false })
      ).inputs;
      const diff = await c.plugin.client.diff("Instance", instance.id, instance.outputs, news);
      expect(diff).toMatchObject({
        changes: "some",
        replaces: ["gpuNums"],
        stables: [],
        detailedDiff: { gpuNums: { kind: "UPDATE_REPLACE", inputDiff: true } },
      });
      const unknownGpu = await c.plugin.client.diff("Instance", instance.id, instance.outputs, {
        ...news,
        gpuNums: 1,
        gpuUuid: UNKNOWN,
      });
      expect(unknownGpu.replaces).toEqual(["gpuUuid"]);
    });

    it("replaces it as the engine does (create the new one, then delete the old one)", async () => {
      const replacement = await created("Instance", { ...c.spec, gpuNums: 2, title: "native-0b" });
      await c.advancing(c.plugin.client.delete("Instance", instance.id, instance.outputs));
      expect(await c.instanceUuids()).toEqual([replacement.id]);
      const gone = await c.plugin.client.read("Instance", instance.id, instance.outputs, instance.inputs);
      expect(gone.id).toBe("");
      instance = replacement;
    });

    it("creates, updates and deletes an idle policy, and imports it with the settings the cloud reports", async () => {
      await updated("Instance", instance, { ...c.spec, gpuNums: 2, title: "native-0b", running: true });
      let policy = await created("IdleClosePolicy", { instanceUuid: instance.id, idlePeriodMinutes: 30 });
      expect(policy.id).toBe(instance.id);
      policy = await updated("IdleClosePolicy", policy, {
        instanceUuid: instance.id,
        idlePeriodMinutes: 60,
        gpuThreshold: 5,
      });
      const imported = await c.plugin.client.read("IdleClosePolicy", instance.id);
      expect(imported.inputs).toEqual({
        instanceUuid: instance.id,
        idlePeriodMinutes: 60,
        destroyOnIdle: false,
        gpuThreshold: 5,
        memoryThreshold: 0,
      });
      await c.plugin.client.delete("IdleClosePolicy", policy.id, policy.outputs);
      const gone = await c.plugin.client.read("IdleClosePolicy", policy.id, policy.outputs, policy.inputs);
      expect(gone.id).toBe("");
      await expect(c.plugin.client.read("IdleClosePolicy", instance.id)).rejects.toThrow(/it has none/);
    });

    it("deletes it: destroyed and gone from the list, and a read reports it gone", async () => {
      await c.advancing(c.plugin.client.delete("Instance", instance.id, instance.outputs));
      expect(await c.instanceUuids()).toEqual([]);
      expect(
        (await c.plugin.client.read("Instance", instance.id, instance.outputs, instance.inputs)).id,
      ).toBe("");
    });
  });

  describe("more of what the engine asks", () => {
    it("keeps a secret input secret through check, create and refresh", async () => {
      const made = await created("Instance", { ...c.spec, title: secret("classified") });
      expect(isSecret(made.inputs.title)).toBe(true);
      expect(made.outputs.title).toEqual(secret("classified"));
      const refreshed = await c.plugin.client.read("Instance", made.id, made.outputs, made.inputs);
      expect(refreshed.outputs.title).toEqual(secret("classified"));
      expect(refreshed.inputs.title).toEqual(secret("classified"));
      await c.advancing(c.plugin.client.delete("Instance", made.id, made.outputs));
    });

    it("completes a create the engine left pending, given its id (`pulumi refresh --import-pending-creates`)", async () => {
      const made = await c.api.instances.createByPod({
        pod_uuid: c.podUuid,
        gpu_uuid: c.gpu4090,
        gpu_nums: 1,
      });
      await c.api.instances.updateTitle(made.instance_uuid, "was-pending");
      const program = (await c.plugin.client.check("Instance", { ...c.spec, title: "was-pending" })).inputs;
      const read = await c.plugin.client.read("Instance", made.instance_uuid, {}, program);
      expect(read.inputs).toMatchObject({ podUuid: c.podUuid, gpuUuid: c.gpu4090, title: "was-pending" });
      const diff = await c.plugin.client.diff("Instance", read.id, read.outputs, program);
      expect(diff.changes).toBe("none");
      await c.advancing(c.plugin.client.delete("Instance", read.id, read.outputs));
    });

    it("saves a personal image, imports it with no diff and deletes it", async () => {
      const source = await created("Instance", c.spec);
      const image = await created("PersonalImage", { instanceUuid: source.id });
      expect(image.outputs).toMatchObject({ imageUuid: image.id, saveImageStatus: 2 });
      const imported = await c.plugin.client.read("PersonalImage", image.id);
      expect(imported.inputs).toEqual({ adoptImageUuid: image.id, waitTimeoutSeconds: 900 });
      const checked = await c.plugin.client.check("PersonalImage", imported.inputs);
      expect(
        await c.plugin.client.diff("PersonalImage", image.id, imported.outputs, checked.inputs),
      ).toMatchObject({
        changes: "none",
      });
      await c.plugin.client.delete("PersonalImage", image.id, image.outputs);
      expect((await c.plugin.client.read("PersonalImage", image.id, image.outputs, image.inputs)).id).toBe(
        "",
      );
      await c.advancing(c.plugin.client.delete("Instance", source.id, source.outputs));
    });

    // Cancel ends every later call of the plugin, so cancel.test.ts tests it on plugins of its own.
    it("refuses a type that is not its own", async () => {
      await expect(c.plugin.client.check("Volume", {})).rejects.toMatchObject({
        code: 3,
        message: expect.stringMatching(/^gpucloud:index:Volume is not a resource of this provider/),
      });
    });
  });

  describe("a create whose answer is lost", () => {
    it("finds the instance the cloud made and answers with it: one instance, known to the state", async () => {
      await c.emu.admin("POST", "/faults", {
        path: "/instance/create_by_pod",
        kind: "drop_after_commit",
        count: 1,
      });
      const made = await created("Instance", { ...c.spec, title: "lost-answer" });
      expect(await c.instanceUuids()).toEqual([made.id]);
      expect(made.outputs).toMatchObject({ instanceUuid: made.id, title: "lost-answer" });
      await c.advancing(c.plugin.client.delete("Instance", made.id, made.outputs));
      expect(await c.instanceUuids()).toEqual([]);
    });
  });

  describe("functions", () => {
    it("answers every data source under its token with the TypeScript function's result names", async () => {
      const call = async (fn: string, args: Props = {}) => {
        const { result, failures } = await c.plugin.client.invoke(fn, args);
        expect(failures).toEqual([]);
        return result;
      };
      expect(await call("getGpu", { name: "4090D" })).toMatchObject({ gpuUuid: c.gpu4090, gpuName: "4090D" });
      expect((await call("getGpus")).gpus).toEqual(
        expect.arrayContaining([expect.objectContaining({ gpuName: "5090" })]),
      );
      expect(await call("getPod", { title: "ComfyUI" })).toMatchObject({ podUuid: c.podUuid });
      expect((await call("getPods")).pods).toEqual(
        expect.arrayContaining([expect.objectContaining({ podUuid: c.podUuid })]),
      );
      expect((await call("getMarketImages")).images).toEqual(expect.any(Array));
      expect(await call("getPersonalImages")).toEqual({ images: [] });
      expect(await call("getInstances")).toEqual({ instances: [] });
      expect(await call("getBalance")).toMatchObject({ balance: expect.any(Number), currency: "CNY" });
      expect(await call("getWorkflow", { workflowId: "wf_portrait_studio" })).toMatchObject({
        workflowId: "wf_portrait_studio",
      });
    });

    it("names a wrong argument before any API call, and refuses an unknown function", async () => {
      const before = await c.calls();
      expect((await c.plugin.client.invoke("getGpu", { name: 4090, size: 1 })).failures).toEqual([
        { property: "name", reason: "name must be a string, got 4090" },
        {
          property: "size",
          reason: "size is not an argument of gpucloud:index:getGpu (arguments: name, includeInvalid)",
        },
      ]);
      expect((await c.plugin.client.invoke("getPod", {})).failures).toEqual([
        { property: "title", reason: "title is required by gpucloud:index:getPod" },
      ]);
      expect(await c.calls()).toEqual(before);
      await expect(c.plugin.client.invoke("getEverything")).rejects.toThrow(
        /gpucloud:index:getEverything is not a function/,
      );
    });
  });

  describe("secrets", () => {
    it("never shows the API key in any answer, failure, stdout or stderr of the whole run", async () => {
      await expect(c.plugin.client.read("Instance", "ins-nope")).rejects.toBeInstanceOf(CallError);
      const everything = [...c.plugin.client.received, c.plugin.stdout, c.plugin.stderr].join("\n");
      expect(c.plugin.client.received.length).toBeGreaterThan(20);
      expect(everything).not.toContain(API_KEY);
    });

    it("closes cleanly on SIGTERM", async () => {
      expect(await c.plugin.stop("SIGTERM")).toBe(0);
    });
  });
});
