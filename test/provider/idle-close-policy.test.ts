import { UNKNOWN, type ResourceState } from "../harness";
import { startWorld, type World } from "../support/world";

describe("IdleClosePolicy against the emulator", () => {
  let w: World;
  let instance: ResourceState;
  beforeAll(async () => (w = await startWorld()));
  afterAll(() => w.stop());
  beforeEach(async () => {
    await w.emu.admin("POST", "/reset");
    instance = await w.advancing(w.h.create("Instance", await w.h.checked("Instance", w.spec)));
  });

  const idleClose = async (uuid: string) => (await w.api.instances.info(uuid)).idle_close;

  it("sets, updates in place, replaces onto another instance and removes the policy", async () => {
    const other = await w.advancing(w.h.create("Instance", await w.h.checked("Instance", w.spec)));
    await w.h.lifecycle({
      resource: "IdleClosePolicy",
      preview: { instanceUuid: UNKNOWN, idlePeriodMinutes: 30 },
      create: { instanceUuid: instance.id, idlePeriodMinutes: 30 },
      afterCreate: async (s) => {
        expect(s.id).toBe(instance.id);
        expect(await idleClose(instance.id)).toEqual({
          idle_period_minutes: 30,
          destroy: false,
          idle_gpu_threshold: 0,
          idle_fb_threshold: 0,
        });
      },
      updates: [
        {
          inputs: {
            instanceUuid: instance.id,
            idlePeriodMinutes: 60,
            destroyOnIdle: true,
            gpuThreshold: 10,
            memoryThreshold: 100,
          },
          expect: { changes: "some" },
          then: async () =>
            expect(await idleClose(instance.id)).toEqual({
              idle_period_minutes: 60,
              destroy: true,
              idle_gpu_threshold: 10,
              idle_fb_threshold: 100,
            }),
        },
        {
          inputs: { instanceUuid: other.id, idlePeriodMinutes: 60 },
          expect: { changes: "some", replaces: ["instanceUuid"] },
          then: async (s) => {
            expect(s.id).toBe(other.id);
            expect(await idleClose(instance.id)).toBeNull();
          },
        },
      ],
    });
    expect(await idleClose(other.id)).toBeNull();
  });

  describe("drift seen by refresh", () => {
    let policy: ResourceState;
    beforeEach(async () => {
      policy = await w.h.create(
        "IdleClosePolicy",
        await w.h.checked("IdleClosePolicy", { instanceUuid: instance.id, idlePeriodMinutes: 10 }),
      );
    });

    it("reads the policy back from the instance and sees a change made out of band", async () => {
      await w.h.expectNoDrift("IdleClosePolicy", policy);
      await w.api.instances.setIdleClose({
        instance_uuid: instance.id,
        idle_period_minutes: 120,
        idle_gpu_threshold: 50,
      });
      const refreshed = await w.h.refresh("IdleClosePolicy", policy);
      expect(refreshed.outputs).toMatchObject({ idlePeriodMinutes: 120, gpuThreshold: 50 });
      expect(await w.h.diff("IdleClosePolicy", policy.id, refreshed.outputs, policy.inputs)).toMatchObject({
        changes: "some",
        replaces: [],
      });
    });

    it("is gone when the policy was cancelled out of band", async () => {
      await w.api.instances.setIdleClose({ instance_uuid: instance.id, idle_period_minutes: 0 });
      expect((await w.h.read("IdleClosePolicy", policy)).id).toBe("");
    });

    it("is gone with its instance, destroyed by the policy itself, and deleting it then succeeds", async () => {
      await w.h.update("IdleClosePolicy", policy, { ...policy.inputs, destroyOnIdle: true });
      await w.emu.admin("PUT", `/instances/${instance.id}/utilization`, { gpu: 0, fb: 0 });
      await w.emu.advance(15 * 60);
      expect((await w.h.read("Instance", instance)).id).toBe("");
      expect((await w.h.read("IdleClosePolicy", policy)).id).toBe("");
      await w.h.delete("IdleClosePolicy", policy);
    });
  });

  describe("deleted on an instance that cannot run anymore", () => {
    let policy: ResourceState;
    beforeEach(async () => {
      policy = await w.h.create(
        "IdleClosePolicy",
        await w.h.checked("IdleClosePolicy", { instanceUuid: instance.id, idlePeriodMinutes: 30 }),
      );
    });

    it("lets `pulumi destroy` through an abnormally stopped instance (status 23), with a warning", async () => {
      await w.emu.admin("POST", `/instances/${instance.id}/force`, { status: 23 });
      // The cloud refuses to cancel the policy of such an instance.
      await expect(
        w.api.instances.setIdleClose({ instance_uuid: instance.id, idle_period_minutes: 0 }),
      ).rejects.toThrow(/abnormal state/);

      await w.h.delete("IdleClosePolicy", policy);
      expect(w.h.stderr).toContain(
        `warning: IdleClosePolicy of instance ${instance.id}: removed from the stack without cancelling it in the cloud, ` +
          "because the instance cannot run anymore (status 23, stopped abnormally), so the policy can never fire. " +
          `The cloud refused the cancel: Could not set idle-close on instance ${instance.id}`,
      );
      await w.advancing(w.h.delete("Instance", instance));
      expect(await w.instanceUuids()).toEqual([]);
    });

    it("still fails when the cloud refuses the cancel of a policy that matters", async () => {
      await w.emu.admin("POST", `/keys/demo-key/disable`);
      await expect(w.h.delete("IdleClosePolicy", policy)).rejects.toThrow(/Could not/);
      expect(w.h.stderr).not.toContain(`IdleClosePolicy of instance ${instance.id}`);
    });
  });

  it("fails clearly on an instance that does not exist", async () => {
    const inputs = await w.h.checked("IdleClosePolicy", {
      instanceUuid: "no-such-instance",
      idlePeriodMinutes: 10,
    });
    await expect(w.h.create("IdleClosePolicy", inputs)).rejects.toThrow(/no-such-instance/);
  });
});
