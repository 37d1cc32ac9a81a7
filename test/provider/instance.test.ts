import { isSecret, reveal, UNKNOWN, type ResourceState } from "../harness";
import { DEMO_KEY } from "../emulator/helpers";
import { DOORS } from "../support/providers";
import { startWorld, type World } from "../support/world";

describe.each(DOORS)("Instance against the emulator, through the %s door", (door) => {
  let w: World;
  beforeAll(async () => (w = await startWorld({ door })));
  afterAll(() => w.stop());
  beforeEach(() => w.emu.admin("POST", "/reset"));

  it("goes through preview, create, in-place updates, a replacement and delete", async () => {
    const { h, spec, api } = w;
    let first = "";
    await w.advancing(
      h.lifecycle({
        resource: "Instance",
        preview: { ...spec, title: UNKNOWN, gpuNums: UNKNOWN },
        create: { ...spec, title: "trainer" },
        afterCreate: async (state) => {
          first = state.id;
          expect(state.outputs).toMatchObject({
            instanceUuid: state.id,
            status: 2,
            statusName: "running",
            title: "trainer",
            running: true,
            gpuName: "4090D",
            gpuNums: 1,
            chargingType: expect.any(Number),
            createTime: expect.any(Number),
          });
          expect(JSON.stringify(state)).not.toContain(DEMO_KEY);
          // The SSH password is only in sshPasswords, never in services. It is secret: the native plugin
          // marks it so itself, while for the dynamic provider the resource class asks the engine to.
          expect(isSecret(state.outputs.sshPasswords)).toBe(door === "native");
          const passwords = Object.values(reveal(state.outputs.sshPasswords) as Record<string, string>);
          expect(passwords).toHaveLength(1);
          expect(JSON.stringify(state.outputs.services)).not.toContain(passwords[0]);
          expect(state.outputs.services).toContainEqual(
            expect.objectContaining({
              portType: "ssh",
              ssh: expect.objectContaining({ username: expect.any(String) }),
            }),
          );
        },
        updates: [
          {
            inputs: { ...spec, title: "renamed" },
            expect: { changes: "some" },
            then: async (s) => expect((await api.instances.info(s.id)).title).toBe("renamed"),
          },
          {
            inputs: { ...spec, title: "renamed", running: false },
            expect: { changes: "some" },
            then: (s) => expect(s.outputs).toMatchObject({ status: 22, running: false }),
          },
          {
            inputs: { ...spec, title: "renamed" },
            expect: { changes: "some" },
            then: (s) => expect(s.outputs).toMatchObject({ status: 2, running: true }),
          },
          {
            inputs: { ...spec, title: "renamed", waitTimeoutSeconds: 600 },
            expect: { changes: "some" },
            then: (s) => expect(s.id).toBe(first),
          },
          {
            inputs: { ...spec, title: "renamed", gpuNums: 2 },
            expect: { changes: "some", replaces: ["gpuNums"] },
            then: (s) => expect(s.outputs.gpuNums).toBe(2),
          },
        ],
      }),
    );
    // The replaced instance is gone and the replacement deleted: nothing is left billing.
    expect(await w.instanceUuids()).toEqual([]);
  });

  it("schedules and cancels a shutdown in place, with shutdownAt as ISO 8601 or Unix seconds", async () => {
    const { h, spec } = w;
    const at = (await w.emu.now()) + 86_400;
    await w.advancing(
      h.lifecycle({
        resource: "Instance",
        create: { ...spec, shutdownAt: new Date(at * 1000).toISOString() },
        afterCreate: (s) =>
          expect(s.outputs).toMatchObject({
            shutdownAt: at,
            shutdownRegular: { shutdownTime: at, enable: true },
          }),
        updates: [
          {
            inputs: spec,
            expect: { changes: "some" },
            then: (s) => expect(s.outputs.shutdownRegular).toEqual({ shutdownTime: 0, enable: false }),
          },
        ],
      }),
    );
  });

  it("refuses a shutdownAt less than 5 minutes ahead before creating anything", async () => {
    const { h, spec } = w;
    // A minute ahead of the cloud's clock, which earlier tests moved past this machine's: a time the
    // cloud has passed is refused as past.
    const soon = Math.max(await w.emu.now(), Math.floor(Date.now() / 1000)) + 60;
    await expect(
      h.create("Instance", await h.checked("Instance", { ...spec, shutdownAt: soon })),
    ).rejects.toThrow(/less than 5 minutes ahead/);
    expect(await w.instanceUuids()).toEqual([]);
  });

  describe("drift seen by refresh", () => {
    let state: ResourceState;
    beforeEach(async () => {
      state = await w.advancing(
        w.h.create("Instance", await w.h.checked("Instance", { ...w.spec, title: "mine" })),
      );
    });

    it("sees a title changed out of band and puts it back in place", async () => {
      await w.api.instances.updateTitle(state.id, "theirs");
      const refreshed = await w.h.refresh("Instance", state);
      expect(refreshed.outputs.title).toBe("theirs");
      expect(refreshed.inputs.title).toBe("theirs");
      expect(await w.h.diff("Instance", state.id, refreshed.outputs, state.inputs)).toMatchObject({
        changes: "some",
        replaces: [],
      });
      const repaired = await w.h.update("Instance", refreshed, state.inputs);
      expect(repaired.outputs.title).toBe("mine");
    });

    it("gives an instance whose title was cleared in the console its owner's mark again", async () => {
      const program = { ...w.spec };
      const named = await w.advancing(w.h.create("Instance", await w.h.checked("Instance", program)));
      const mark = named.inputs.title as string;
      expect(mark).toMatch(/-[0-9a-f]{7}$/);
      await w.api.instances.updateTitle(named.id, "");
      const refreshed = await w.h.refresh("Instance", named);
      const news = await w.h.checked("Instance", program, refreshed.inputs);
      expect(news.title).toMatch(/-[0-9a-f]{7}$/);
      expect(await w.h.diff("Instance", named.id, refreshed.outputs, news)).toMatchObject({
        changes: "some",
        replaces: [],
      });
      const repaired = await w.h.update("Instance", refreshed, news);
      expect(repaired.outputs.title).toBe(news.title);
      await w.h.delete("Instance", repaired);
    });

    it("sees an instance shut down by its idle policy and starts it again", async () => {
      await w.api.instances.setIdleClose({ instance_uuid: state.id, idle_period_minutes: 10 });
      await w.emu.admin("PUT", `/instances/${state.id}/utilization`, { gpu: 0, fb: 0 });
      await w.emu.advance(15 * 60);
      const refreshed = await w.h.refresh("Instance", state);
      expect(refreshed.outputs).toMatchObject({ running: false, status: 22 });
      expect(refreshed.inputs.running).toBe(false);
      expect(await w.h.diff("Instance", state.id, refreshed.outputs, state.inputs)).toMatchObject({
        changes: "some",
        replaces: [],
      });
      const repaired = await w.advancing(w.h.update("Instance", refreshed, state.inputs));
      expect(repaired.outputs).toMatchObject({ running: true, status: 2 });
    });

    it("reports an instance destroyed out of band as gone, and deleting it again succeeds", async () => {
      await w.api.instances.destroy(state.id);
      expect((await w.h.read("Instance", state)).id).toBe("");
      await w.h.delete("Instance", state);
    });

    it("shows no drift when nothing changed, and rebuilds only inputs (no secret output among them)", async () => {
      await w.h.expectNoDrift("Instance", state);
      const { inputs } = await w.h.read("Instance", state);
      expect(Object.keys(inputs ?? {}).sort()).toEqual([
        "gpuNums",
        "gpuUuid",
        "podUuid",
        "running",
        "title",
        "waitForServices",
        "waitTimeoutSeconds",
      ]);
    });
  });

  it("adopts an existing instance instead of creating one, and applies the title", async () => {
    const created = await w.api.instances.createByPod({
      pod_uuid: w.podUuid,
      gpu_uuid: w.gpu4090,
      gpu_nums: 1,
    });
    await w.advancing(
      w.h.lifecycle({
        resource: "Instance",
        create: { ...w.spec, title: "adopted", adoptInstanceUuid: created.instance_uuid },
        afterCreate: (s) =>
          expect(s).toMatchObject({ id: created.instance_uuid, outputs: { title: "adopted" } }),
        updates: [{ inputs: { ...w.spec, title: "adopted" }, expect: { changes: "none" } }],
      }),
    );
    expect(await w.instanceUuids()).toEqual([]);
  });

  it("refuses to adopt an instance whose GPU differs from the program, naming the field", async () => {
    const created = await w.api.instances.createByPod({
      pod_uuid: w.podUuid,
      gpu_uuid: w.gpu5090,
      gpu_nums: 1,
    });
    await expect(
      w.h.create(
        "Instance",
        await w.h.checked("Instance", { ...w.spec, adoptInstanceUuid: created.instance_uuid }),
      ),
    ).rejects.toThrow(
      `Could not adopt instance ${created.instance_uuid}: gpuUuid is "${w.gpu4090}" in your program but "${w.gpu5090}" on the instance.`,
    );
  });

  it("destroys the instance when it does not start in time, and says so", async () => {
    const inputs = await w.h.checked("Instance", { ...w.spec, waitTimeoutSeconds: 1 });
    await expect(w.h.create("Instance", inputs)).rejects.toThrow(/was destroyed so nothing is left billing/);
    expect(await w.instanceUuids()).toEqual([]);
  });
});
