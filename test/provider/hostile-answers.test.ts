/**
 * The Instance against a cloud whose answers are not what the API's text promises, through both front
 * doors: listings that send the optional fields of every instance as null (an untitled instance listed
 * with `title: null`), a list whose `total` counts an instance no page shows (as the live service is
 * reported to do), and a create's answer that cannot be read. None of them may fail an up, a refresh, a
 * destroy or the recovery of a lost create; each case checks what the state and the cloud hold after.
 * The request timeout is 0.5 s, so the waits of a lost create's recovery run in seconds on the real clock.
 */
import type { FaultSpec } from "../../emulator/core/controls/faults";
import type { Props, ResourceState } from "../harness";
import { DEMO_USER } from "../emulator/helpers";
import { DOORS } from "../support/providers";
import { startWorld, titlesIn, type World } from "../support/world";

const CONFIG = { "gpucloud:requestTimeoutMs": "500" };
const CREATE = "/instance/create_by_pod";
const LIST = "/instance/list";
/** Titled instances of another spec, so every listing has two pages (100 a page). */
const DECOYS = 150;
/** Bounds every wait here, so a walk that never settles fails the test instead of outlasting it. */
const WAIT_SECONDS = 20;

jest.setTimeout(180_000);

describe.each(DOORS)("an Instance against hostile answers, through the %s door", (door) => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld({ door, config: CONFIG, emulator: { balance: "1000000" } });
  });
  afterAll(() => w?.stop());
  beforeEach(async () => {
    await w.emu.admin("POST", "/reset");
  });

  const inputs = (more: Props = {}) =>
    w.h.checked("Instance", { ...w.spec, waitTimeoutSeconds: WAIT_SECONDS, ...more });
  /** Every call to `path` meets `kind` until the faults are cleared. */
  const always = (path: string, kind: FaultSpec["kind"]) =>
    w.emulator.faults.add({ path, kind, probability: 1 });
  const once = (path: string, kind: FaultSpec["kind"], count = 1) =>
    w.emulator.faults.add({ path, kind, count });
  const createCalls = async () =>
    ((await w.emu.admin("GET", "/requests")).body.requests as { path: string }[]).filter(
      (r) => r.path === CREATE,
    ).length;
  /** An instance of the spec made by hand and never titled. */
  const untitledByHand = () =>
    w.emulator.instances.createByPod(DEMO_USER, { pod_uuid: w.podUuid, gpu_uuid: w.gpu4090, gpu_nums: 1 })
      .instance_uuid;
  const decoys = () => {
    for (let i = 0; i < DECOYS; i++) {
      const { instance_uuid } = w.emulator.instances.createByPod(DEMO_USER, {
        pod_uuid: w.podUuid,
        gpu_uuid: w.gpu5090,
        gpu_nums: 1,
      });
      w.emulator.instances.updateTitle(DEMO_USER, instance_uuid, `decoy-${i}`);
    }
  };

  it("creates, refreshes and destroys while every listing sends each instance's optional fields as null", async () => {
    const byHand = untitledByHand();
    always(LIST, "nulls_after_commit");
    const state = await w.advancing(w.h.create("Instance", await inputs({ title: "mine" })));
    expect(state.outputs).toMatchObject({
      title: "mine",
      status: 2,
      statusName: "running",
      gpuName: "4090D",
    });
    const refreshed = await w.h.refresh("Instance", state);
    expect(refreshed).toMatchObject({ id: state.id, outputs: { title: "mine", status: 2 } });
    await w.advancing(w.h.delete("Instance", refreshed));
    expect(w.cloudInstances()).toEqual([byHand]);
    expect(titlesIn(w.emulator).get(byHand)).toBe("");
  });

  it("adopts the instance of a lost create while the listings show it with title: null", async () => {
    once(CREATE, "drop_after_commit");
    // The walks before the create and the first ones of its recovery.
    once(LIST, "nulls_after_commit", 4);
    const state = await w.advancing(w.h.create("Instance", await inputs({ title: "recovered" })));
    expect(state.outputs).toMatchObject({ title: "recovered", status: 2, pendingCreate: null });
    expect(w.cloudInstances()).toEqual([state.id]);
    expect(await createCalls()).toBe(1);
  });

  it("adopts the instance a create made when its answer was a gateway's HTML page with HTTP 200, sent once", async () => {
    once(CREATE, "html_after_commit");
    const state = await w.advancing(w.h.create("Instance", await inputs({ title: "unread" })));
    expect(state.outputs).toMatchObject({ title: "unread", status: 2, pendingCreate: null });
    expect(w.cloudInstances()).toEqual([state.id]);
    expect(await createCalls()).toBe(1);
  });

  describe("while the list's total counts an instance no page shows", () => {
    beforeEach(() => {
      decoys();
      always(LIST, "total_counts_hidden");
    });

    it("completes a destroy: the instance is gone from listings whose total never matches them", async () => {
      w.emulator.faults.clear();
      const made = await w.advancing(w.h.create("Instance", await inputs({ title: "counted" })));
      always(LIST, "total_counts_hidden");
      await w.advancing(w.h.delete("Instance", made));
      expect(w.cloudInstances()).not.toContain(made.id);
      expect(w.cloudInstances()).toHaveLength(DECOYS);
    });

    it("resolves a lost create by adopting what it made, and refreshes it", async () => {
      once(CREATE, "drop_after_commit");
      const made = await w.advancing(w.h.create("Instance", await inputs({ title: "counted" })));
      expect(made.outputs).toMatchObject({ title: "counted", status: 2, pendingCreate: null });
      expect(await createCalls()).toBe(1);
      const refreshed: ResourceState = await w.h.refresh("Instance", made);
      expect(refreshed).toMatchObject({ id: made.id, outputs: { title: "counted" } });
      expect(w.cloudInstances()).toHaveLength(DECOYS + 1);
    });
  });
});
