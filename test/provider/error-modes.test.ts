/**
 * The provider against both ways the cloud may answer a business failure (the emulator's error modes):
 * envelope, the live service's and the emulator's default (HTTP 200 with a non-zero code), and http
 * (400/404 with the same body). A gone instance must read as gone, a refused create must fail once with
 * the cloud's reason and leave nothing behind, in both. One front door is enough here: both doors read
 * answers through the same SDK (test/sdk covers its every error class in both modes).
 */
import type { ErrorStatusMode } from "pulumi-gpucloud/emulator";
import { callsByEndpoint, DEMO_USER } from "../emulator/helpers";
import { startWorld, type World } from "../support/world";

const MODES: readonly ErrorStatusMode[] = ["envelope", "http"];

describe.each(MODES)("the Instance resource when the cloud answers failures in %s mode", (mode) => {
  let w: World;
  beforeAll(async () => (w = await startWorld({ emulator: { errorStatus: mode } })));
  afterAll(() => w.stop());
  beforeEach(() => w.emu.admin("POST", "/reset"));

  it("creates, renames and deletes an instance", async () => {
    await w.advancing(
      w.h.lifecycle({
        resource: "Instance",
        create: { ...w.spec, title: "first" },
        updates: [
          {
            inputs: { ...w.spec, title: "second" },
            expect: { changes: "some" },
            then: async (s) => expect((await w.api.instances.info(s.id)).title).toBe("second"),
          },
        ],
      }),
    );
    expect(await w.instanceUuids()).toEqual([]);
  });

  it("reads an instance destroyed out of band as gone, and deleting it again succeeds", async () => {
    const state = await w.advancing(w.h.create("Instance", await w.h.checked("Instance", w.spec)));
    await w.api.instances.destroy(state.id);
    expect((await w.h.read("Instance", state)).id).toBe("");
    await w.h.delete("Instance", state);
  });

  it("fails a create the balance does not cover once, with the cloud's reason, and leaves nothing", async () => {
    await w.emu.admin("PUT", `/users/${DEMO_USER}/balance`, { balance: 0 });
    await w.emu.admin("DELETE", "/requests");
    await expect(w.h.create("Instance", await w.h.checked("Instance", w.spec))).rejects.toThrow(
      /insufficient balance/,
    );
    expect((await callsByEndpoint(w.emu))["POST /instance/create_by_pod"]).toBe(1);
    expect(w.cloudInstances()).toEqual([]);
  });
});
