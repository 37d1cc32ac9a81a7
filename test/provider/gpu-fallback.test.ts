/**
 * Instance fallbackGpuUuids through both front doors against a real emulator whose GPU stock a test
 * sets: a create or start refused for one model goes on to the next at once, the model it got is the
 * output runningGpuUuid, and the plan leaves the instance alone while its list still holds that model.
 */
import type { ResourceState } from "../harness";
import { UNKNOWN } from "../harness";
import { DOORS } from "../support/providers";
import { startWorld, type World } from "../support/world";

const INVALID_GPU = "gpu-1a4b3090f3a4b5c6";

describe.each(DOORS)("Instance fallbackGpuUuids through the %s front door", (door) => {
  let w: World;
  let gpu4080: string;
  beforeAll(async () => {
    w = await startWorld({ door });
    gpu4080 = (await w.api.catalogue.gpus()).gpu_list.find((g) => g.gpu_name === "4080")!.gpu_uuid;
  });
  afterAll(() => w.stop());
  beforeEach(async () => {
    await w.emu.admin("POST", "/reset");
    await w.emu.admin("DELETE", "/requests");
  });

  const setFree = (gpu: string, free: number | null) => w.emu.admin("PUT", `/gpus/${gpu}/stock`, { free });
  const calls = async (path: string) =>
    ((await w.emu.admin("GET", "/requests")).body.requests as { path: string; status: number }[]).filter(
      (r) => r.path.endsWith(path),
    ).length;
  const balance = async () => (await w.api.account.balance()).balance;
  const create = async (inputs: Record<string, unknown>) =>
    w.advancing(w.h.create("Instance", await w.h.checked("Instance", inputs)));

  it("creates on the first fallback when the first model has no free cards, one refused call and nothing else", async () => {
    await setFree("4090D", 0);
    const state = await create({ ...w.spec, fallbackGpuUuids: [w.gpu5090, gpu4080] });
    expect(state.outputs).toMatchObject({ gpuUuid: w.gpu4090, runningGpuUuid: w.gpu5090, gpuName: "5090" });
    expect(await calls("/instance/create_by_pod")).toBe(2);
    expect(await w.instanceUuids()).toEqual([state.id]);
    await w.h.expectNoDrift("Instance", state);
  });

  it("plans nothing for a list that still holds the model, and a replacement for one that does not", async () => {
    await setFree("4090D", 0);
    const inputs = { ...w.spec, fallbackGpuUuids: [w.gpu5090, gpu4080] };
    const state = await create(inputs);
    const planFor = async (news: Record<string, unknown>) => {
      const diff = await w.h.diff(
        "Instance",
        state.id,
        state.outputs,
        await w.h.checked("Instance", news, state.inputs),
      );
      return { changes: diff.changes, replaces: [...diff.replaces].sort() };
    };
    const none = { changes: "none", replaces: [] };
    expect(await planFor({ ...inputs, fallbackGpuUuids: [gpu4080, w.gpu5090] })).toEqual(none);
    expect(await planFor({ ...inputs, gpuUuid: w.gpu5090, fallbackGpuUuids: [w.gpu4090] })).toEqual(none);
    expect(await planFor({ ...w.spec, gpuUuid: w.gpu5090 })).toEqual(none);
    expect(await planFor({ ...inputs, fallbackGpuUuids: [gpu4080] })).toEqual({
      changes: "some",
      replaces: ["fallbackGpuUuids"],
    });
    expect(await planFor(w.spec)).toEqual({
      changes: "some",
      replaces: ["fallbackGpuUuids"],
    });
  });

  it("fails naming every model and its refusal when none has cards, makes nothing, and makes one at the next up", async () => {
    for (const gpu of ["4090D", "5090"]) await setFree(gpu, 0);
    const before = await balance();
    const inputs = await w.h.checked("Instance", { ...w.spec, fallbackGpuUuids: [w.gpu5090] });
    const failure = await w.advancing(w.h.create("Instance", inputs)).catch((err: Error) => err);
    expect(failure).toBeInstanceOf(Error);
    const message = (failure as Error).message;
    expect(message).toContain("refused every GPU model of gpuUuid and fallbackGpuUuids");
    expect(message).toContain(`4090D (${w.gpu4090}): no free 4090D cards`);
    expect(message).toContain(`5090 (${w.gpu5090}): no free 5090 cards`);
    expect(message).toContain("Nothing was made and nothing charged");
    expect(await calls("/instance/create_by_pod")).toBe(2);
    expect(w.cloudInstances()).toEqual([]);
    expect(await balance()).toBe(before);

    await setFree("5090", 1);
    const state = await w.advancing(w.h.create("Instance", inputs));
    expect(state.outputs.runningGpuUuid).toBe(w.gpu5090);
    expect(w.cloudInstances()).toEqual([state.id]);
  });

  it("starts a stopped instance on a fallback when its own model has no free cards, moving it there", async () => {
    const inputs = { ...w.spec, fallbackGpuUuids: [w.gpu5090] };
    let state: ResourceState = await create({ ...inputs, running: false });
    expect(state.outputs).toMatchObject({ runningGpuUuid: w.gpu4090, statusName: "stopped" });
    await setFree("4090D", 0);
    await w.emu.admin("DELETE", "/requests");
    state = await w.advancing(
      w.h.update(
        "Instance",
        state,
        await w.h.checked("Instance", { ...inputs, running: true }, state.inputs),
      ),
    );
    expect(state.outputs).toMatchObject({
      runningGpuUuid: w.gpu5090,
      gpuName: "5090",
      statusName: "running",
    });
    expect(await calls("/instance/startup")).toBe(2);
    await w.h.expectNoDrift("Instance", state);
  });

  it("keeps a refused start's instance stopped and names each model when every one is refused", async () => {
    const inputs = { ...w.spec, fallbackGpuUuids: [w.gpu5090] };
    const state = await create({ ...inputs, running: false });
    for (const gpu of ["4090D", "5090"]) await setFree(gpu, 0);
    const news = await w.h.checked("Instance", { ...inputs, running: true }, state.inputs);
    const failure = await w.advancing(w.h.update("Instance", state, news)).catch((err: Error) => err);
    expect((failure as Error).message).toMatch(
      /Could not start instance .*refused every GPU model.*4090D .*: no free 4090D cards.*5090 .*: no free 5090 cards.*stays stopped/s,
    );
    const cloud = await w.api.instances.info(state.id);
    expect({ status: cloud.status, gpu: cloud.gpu_uuid }).toEqual({ status: 22, gpu: w.gpu4090 });
  });

  it("refuses bad lists at Check, naming fallbackGpuUuids and the rule, and passes unknowns", async () => {
    const failures = async (fallbackGpuUuids: unknown) =>
      (await w.h.check("Instance", { ...w.spec, fallbackGpuUuids })).failures.map((f) => [
        f.property,
        f.reason,
      ]);
    expect(await failures([])).toEqual([
      ["fallbackGpuUuids", expect.stringMatching(/must not be empty: leave fallbackGpuUuids out/)],
    ]);
    expect(await failures([w.gpu5090, w.gpu5090])).toEqual([
      [
        "fallbackGpuUuids",
        expect.stringMatching(/each GPU model once.*fallbackGpuUuids\[1\].*repeats fallbackGpuUuids\[0\]/),
      ],
    ]);
    expect(await failures([w.gpu4090])).toEqual([
      ["fallbackGpuUuids", expect.stringMatching(/fallbackGpuUuids\[0\] .* repeats gpuUuid/)],
    ]);
    expect(await failures([w.gpu5090, 7])).toEqual([
      ["fallbackGpuUuids", expect.stringMatching(/^fallbackGpuUuids\.1 must be a string/)],
    ]);
    expect(await failures("5090")).toEqual([
      ["fallbackGpuUuids", expect.stringMatching(/must be a list of GPU model uuids/)],
    ]);
    expect(await failures(["gpu-nowhere"])).toEqual([
      [
        "fallbackGpuUuids",
        expect.stringMatching(
          /fallbackGpuUuids\[0\] \(gpu-nowhere\) is not a GPU model of the cloud's catalogue/,
        ),
      ],
    ]);
    expect(await failures([w.gpu5090, INVALID_GPU])).toEqual([
      [
        "fallbackGpuUuids",
        expect.stringMatching(/fallbackGpuUuids\[1\] .* is 3090, not available to rent now/),
      ],
    ]);
    expect(await failures(UNKNOWN)).toEqual([]);
    expect(await failures([UNKNOWN, w.gpu5090])).toEqual([]);
    expect(await calls("/instance/create_by_pod")).toBe(0);
  });

  it("passes at Check a model of the list the state already holds, though it left the catalogue", async () => {
    const olds = { ...w.spec, fallbackGpuUuids: ["gpu-retired"] };
    const { failures } = await w.h.check("Instance", olds, olds);
    expect(failures).toEqual([]);
  });
});

describe("import of an instance on a fallback model (native plugin)", () => {
  let w: World;
  beforeAll(async () => (w = await startWorld({ door: "native" })));
  afterAll(() => w.stop());

  it("shows the model it runs on as gpuUuid and runningGpuUuid", async () => {
    await w.emu.admin("PUT", "/gpus/4090D/stock", { free: 0 });
    const inputs = await w.h.checked("Instance", { ...w.spec, fallbackGpuUuids: [w.gpu5090] });
    const { id } = await w.advancing(w.h.create("Instance", inputs));
    const imported = await w.h.read("Instance", { id, inputs: {}, outputs: {} });
    expect(imported.inputs).toMatchObject({ gpuUuid: w.gpu5090 });
    expect(imported.inputs).not.toHaveProperty("fallbackGpuUuids");
    expect(imported.outputs).toMatchObject({ gpuUuid: w.gpu5090, runningGpuUuid: w.gpu5090 });
  });
});
