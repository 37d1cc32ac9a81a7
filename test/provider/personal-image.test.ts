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

  it("refuses to adopt an image that is not in the private list", async () => {
    const inputs = await w.h.checked("PersonalImage", { adoptImageUuid: "img-nope" });
    await expect(w.h.create("PersonalImage", inputs)).rejects.toThrow(/Could not adopt image img-nope/);
  });
});
