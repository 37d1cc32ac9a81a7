import * as path from "node:path";
import { GpuCloudClient } from "pulumi-gpucloud/sdk";
import { assertBuilt, ensurePackageLink } from "../../dev/self-link";
import { SAVE_IMAGE_SECONDS } from "../../emulator/images/store";
import { nativeFrontDoor, OperationError, Stack, type OperationResult, type Step } from "../../testing";
import {
  callsByEndpoint,
  DEMO_KEY,
  runningInstance,
  startTestEmulator,
  type TestEmulator,
} from "../emulator/helpers";
import { UNKNOWN, type ResourceState } from "../harness";
import { advancing } from "../support/clock";
import { DOORS, providerConfig } from "../support/providers";
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

const IMAGE_PROGRAM = path.join(__dirname, "fixtures", "personal-image-program.ts");

/**
 * Saves that outlast their create, under the engine (the testing Stack): the image exists from save_image
 * on, so the state must keep it whatever fails after, and the next `up` must finish or replace it
 * rather than save the instance again. The emulator's clock stands still unless a test moves it, so a
 * save (120 simulated seconds) cannot end within a create's waitTimeoutSeconds of 1 (real) second.
 */
describe.each(DOORS)("a PersonalImage whose save outlasts its create, through the %s door", (door) => {
  let emu: TestEmulator;
  let api: GpuCloudClient;
  let instanceUuid: string;
  let stack: Stack | undefined;
  beforeAll(async () => {
    assertBuilt();
    ensurePackageLink();
    emu = await startTestEmulator();
    api = new GpuCloudClient({ baseUrl: emu.url, apiKey: DEMO_KEY });
    instanceUuid = await runningInstance(emu);
  });
  afterAll(async () => {
    await api?.close();
    await emu?.close();
  });
  beforeEach(async () => {
    for (const { uuid } of (await api.images.list()).image_list) await api.images.delete(uuid);
    await emu.admin("DELETE", "/requests");
    stack = await Stack.open({
      program: IMAGE_PROGRAM,
      project: "image",
      stack: door,
      config: {
        ...providerConfig(emu.url),
        "image:instanceUuid": instanceUuid,
        "image:waitTimeoutSeconds": "1",
      },
      frontDoor: door === "native" ? nativeFrontDoor() : undefined,
    });
  });
  afterEach(async () => {
    await stack?.close();
  });

  const kept = () => stack!.current.resources.find((r) => r.name === "snapshot");
  const imagesInCloud = async () =>
    (await api.images.list()).image_list.map((i) => ({ uuid: i.uuid, status: i.save_image_status }));
  const saveImageCalls = async () => (await callsByEndpoint(emu))["POST /instance/save_image"] ?? 0;

  it("keeps the image of a create whose wait timed out, and the next up waits for it instead of saving again", async () => {
    const created = await snapshotStep(stack!.up());
    expect(created).toMatchObject({ op: "create", id: expect.stringMatching(/^pimg-/) });
    const id = created.id!;
    expect(created.initErrors).toEqual([expect.stringContaining(`Image ${id} exists (save_image_status 1)`)]);
    expect(kept()).toMatchObject({
      id,
      outputs: { imageUuid: id, instanceUuid, saveImageStatus: 1 },
      initErrors: created.initErrors,
    });
    expect(await imagesInCloud()).toEqual([{ uuid: id, status: 1 }]);

    // Still saving: the engine updates the unfinished image, whose wait times out again; it stays kept.
    expect(await snapshotStep(stack!.up())).toMatchObject({
      op: "update",
      id,
      initErrors: [expect.any(String)],
    });
    expect(kept()).toMatchObject({ id, outputs: { saveImageStatus: 1 } });

    await emu.advance(SAVE_IMAGE_SECONDS);
    expect(plan(await stack!.preview())).toEqual({ snapshot: "update" });
    expect(plan(await stack!.up())).toEqual({ snapshot: "update" });
    expect(kept()).toMatchObject({ id, outputs: { imageUuid: id, saveImageStatus: 2 } });
    expect(kept()!.initErrors).toBeUndefined();
    expect(await imagesInCloud()).toEqual([{ uuid: id, status: 2 }]);
    expect(await saveImageCalls()).toBe(1);

    expect(plan(await stack!.refresh())).toEqual({ snapshot: "same" });
    expect(plan(await stack!.up())).toEqual({ snapshot: "same" });
    await stack!.destroy();
    expect(await imagesInCloud()).toEqual([]);
  });

  it("keeps an image whose save the cloud reports failed, and the next up replaces it", async () => {
    const failed = (await snapshotStep(stack!.up())).id!;
    await failSavesUnderWay(emu);
    await emu.advance(SAVE_IMAGE_SECONDS);
    expect(await imagesInCloud()).toEqual([{ uuid: failed, status: 3 }]);

    // The update that would wait sees the failure: the state keeps the failed image, and says so.
    const seen = await snapshotStep(stack!.up());
    expect(seen).toMatchObject({ op: "update", id: failed });
    expect(seen.initErrors).toEqual([
      expect.stringContaining(`the cloud reports that saving image ${failed} failed (save_image_status 3)`),
    ]);
    expect(kept()).toMatchObject({ id: failed, outputs: { saveImageStatus: 3 } });

    expect(plan(await stack!.preview())).toEqual({ snapshot: "replace" });
    const replaced = await advancing(emu, stack!.up());
    const replacement = kept()!;
    expect(replacement.id).not.toBe(failed);
    // The new save first, then the failed image deleted.
    expect(replaced.steps.map((s) => `${s.op} ${s.id}`)).toEqual([
      `replace ${replacement.id}`,
      `delete ${failed}`,
    ]);
    expect(replacement.outputs).toMatchObject({ imageUuid: replacement.id, saveImageStatus: 2 });
    expect(replacement.initErrors).toBeUndefined();
    expect(await imagesInCloud()).toEqual([{ uuid: replacement.id, status: 2 }]);
    expect(await saveImageCalls()).toBe(2);
    await stack!.destroy();
  });
});

/** The `snapshot` step of an up that must fail with the image kept unfinished (init errors). */
async function snapshotStep(up: Promise<OperationResult>): Promise<Step> {
  const failure = await up.then(
    () => new Error("the up succeeded, but it was expected to fail with the image kept unfinished"),
    (err: unknown) => err,
  );
  if (!(failure instanceof OperationError)) throw failure;
  const step = failure.steps.find((s) => s.name === "snapshot");
  if (!step?.initErrors) throw failure;
  return step;
}

/** `{ name: op }` for every step. */
function plan(result: OperationResult): Record<string, string> {
  return Object.fromEntries(result.steps.map((s) => [s.name, s.op]));
}

/** Makes every save under way end failed (save_image_status 3), through the admin API's snapshot. */
async function failSavesUnderWay(emu: TestEmulator): Promise<void> {
  type Transition = { save_image_status: number } | null;
  const state = (await emu.admin("GET", "/snapshot")).body as unknown as {
    rooms: { images: { next: Transition }[]; instances: { save_image_next: Transition }[] };
  };
  for (const image of state.rooms.images) if (image.next) image.next.save_image_status = 3;
  for (const instance of state.rooms.instances)
    if (instance.save_image_next) instance.save_image_next.save_image_status = 3;
  expect((await emu.admin("PUT", "/snapshot", state)).status).toBe(200);
}
