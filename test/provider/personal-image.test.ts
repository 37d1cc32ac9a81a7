import { UNKNOWN, type ResourceState } from "../harness";
import { startWorld, type World } from "../support/world";

describe("PersonalImage against the emulator", () => {
  let w: World;
  let instance: ResourceState;
  beforeAll(async () => (w = await startWorld()));
  afterAll(() => w.stop());
  beforeEach(async () => {
    await w.emu.admin("POST", "/reset");
    instance = await w.advancing(
      w.h.create("Instance", await w.h.checked("Instance", { ...w.spec, title: "base" })),
    );
  });

  const imageUuids = async () => (await w.api.images.list()).image_list.map((i) => i.uuid).sort();

  it("saves an instance as an image, waits until it is saved, reads it back and deletes it", async () => {
    const before = await imageUuids();
    const state = await w.advancing(
      w.h.lifecycle({
        resource: "PersonalImage",
        preview: { instanceUuid: UNKNOWN },
        create: { instanceUuid: instance.id },
        afterCreate: async (s) => {
          expect(s.outputs).toMatchObject({
            imageUuid: s.id,
            saveImageStatus: 2,
            instanceUuid: instance.id,
            createTime: expect.any(Number),
          });
          expect(await imageUuids()).toEqual([...before, s.id].sort());
        },
        updates: [
          { inputs: { instanceUuid: instance.id, waitTimeoutSeconds: 60 }, expect: { changes: "some" } },
        ],
      }),
      20,
    );
    expect(await imageUuids()).not.toContain(state.id);
  });

  it("adopts an existing image by uuid, sees it deleted out of band, and deleting it again succeeds", async () => {
    const saved = await w.advancing(w.api.images.saveFromInstance(instance.id, { pollIntervalMs: 10 }), 20);
    const state = await w.h.create(
      "PersonalImage",
      await w.h.checked("PersonalImage", { adoptImageUuid: saved.uuid }),
    );
    expect(state.id).toBe(saved.uuid);
    await w.h.expectNoDrift("PersonalImage", state);
    await w.api.images.delete(saved.uuid);
    expect((await w.h.read("PersonalImage", state)).id).toBe("");
    await w.h.delete("PersonalImage", state);
  });

  it.each([
    ["http_500", "HTTP 500"],
    ["reset", "the answer was lost"],
  ])(
    "fails at once when save_image failed (%s) before starting a save, saying the cloud shows none",
    async (kind, cause) => {
      await w.emu.admin("POST", "/faults", { path: "/instance/save_image", kind, count: 1 });
      const before = await imageUuids();
      // A timeout short enough that waiting it out, as before, would fail with the timeout's advice instead.
      const inputs = await w.h.checked("PersonalImage", { instanceUuid: instance.id, waitTimeoutSeconds: 5 });
      await expect(w.h.create("PersonalImage", inputs)).rejects.toThrow(
        `Could not save instance ${instance.id} as an image: save_image failed (${cause}) and the cloud shows ` +
          "no save started: no new image in your personal image list, and the instance's save_image_status is 0, " +
          "not 1 (uploading). Nothing was saved; run the update again.",
      );
      expect(await imageUuids()).toEqual(before);
    },
  );

  it("waits as before when save_image's answer was lost after the save started", async () => {
    await w.emu.admin("POST", "/faults", {
      path: "/instance/save_image",
      kind: "drop_after_commit",
      count: 1,
    });
    const state = await w.advancing(
      w.h.create("PersonalImage", await w.h.checked("PersonalImage", { instanceUuid: instance.id })),
      20,
    );
    expect(state.outputs).toMatchObject({ imageUuid: state.id, saveImageStatus: 2 });
    expect(await imageUuids()).toContain(state.id);
  });

  it("refuses to adopt an image that is not in the private list", async () => {
    const inputs = await w.h.checked("PersonalImage", { adoptImageUuid: "img-nope" });
    await expect(w.h.create("PersonalImage", inputs)).rejects.toThrow(/Could not adopt image img-nope/);
  });
});
