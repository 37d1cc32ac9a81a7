import type { ResourceState } from "../harness";
import { callsByEndpoint } from "../emulator/helpers";
import { startWorld, type World } from "../support/world";

/** Coalescing as Pulumi drives it: many resources' calls at once through one dynamic-provider server. */
describe("a fleet of Instances through the provider server", () => {
  let w: World;
  beforeAll(async () => (w = await startWorld()));
  afterAll(() => w.stop());
  beforeEach(() => w.emu.admin("POST", "/reset"));

  const calls = () => callsByEndpoint(w.emu);

  /** Running instances made straight through the API, with the state the engine would hold for them. */
  async function fleet(count: number): Promise<ResourceState[]> {
    const inputs = await w.h.checked("Instance", w.spec);
    const states: ResourceState[] = [];
    for (let i = 0; i < count; i++) {
      const created = await w.api.instances.createByPod({
        pod_uuid: w.podUuid,
        gpu_uuid: w.gpu4090,
        gpu_nums: 1,
      });
      states.push({ id: created.instance_uuid, inputs, outputs: inputs });
    }
    await w.emu.advance(60);
    await w.emu.admin("DELETE", "/requests");
    return states;
  }

  it("refreshes 12 instances with one /instance/list call and reports the one destroyed meanwhile as gone", async () => {
    const states = await fleet(12);
    await w.api.instances.destroy(states[3].id);
    await w.emu.admin("DELETE", "/requests");
    const refreshed = await Promise.all(states.map((s) => w.h.refresh("Instance", s)));
    expect(refreshed.map((r) => r.id)).toEqual(states.map((s, i) => (i === 3 ? "" : s.id)));
    expect(refreshed[0].outputs).toMatchObject({
      status: 2,
      running: true,
      serverUrls: [expect.any(String)],
    });
    // Beside the one walk, the provider process's first operation checks once that baseUrl serves the API.
    expect(await calls()).toEqual({ "GET /instance/list": 1, "GET /pod/list": 1 });
  });

  it("creates 6 instances at once, waiting for them with shared list walks and no /instance/info", async () => {
    const inputs = await Promise.all(
      Array.from({ length: 6 }, (_, i) => w.h.checked("Instance", { ...w.spec, title: `node-${i}` })),
    );
    const created = await w.advancing(Promise.all(inputs.map((i) => w.h.create("Instance", i))));
    expect(created.map((c) => c.outputs.status)).toEqual([2, 2, 2, 2, 2, 2]);
    expect(created.map((c) => c.outputs.title)).toEqual(created.map((_, i) => `node-${i}`));
    const counted = await calls();
    expect(counted["POST /instance/create_by_pod"]).toBe(6);
    expect(counted["GET /instance/info"]).toBeUndefined();
  });
});
