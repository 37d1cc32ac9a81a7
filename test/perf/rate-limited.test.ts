/**
 * Under the emulator's `--rate-limit 20`: the client learns the allowed rate from its first wave of 429s
 * and keeps under it, and waits that queued behind a fleet's writes poll again soon after them (a walk
 * costs its paced pages, not the time it queued).
 */
import { GpuCloudClient, type RequestEvent } from "pulumi-gpucloud/sdk";
import { userOfKeySpec } from "../../emulator";
import { InstancesRoom } from "../../emulator/instances/routes";
import { InstanceReads } from "../../provider/resources/instance/reads";
import { DEMO_KEY, gpuUuid, pod, startTestEmulator, type TestEmulator } from "../emulator/helpers";

const RATE = 20;

describe("a client under a rate limit", () => {
  let t: TestEmulator;
  let events: RequestEvent[];
  /** The client's pacingMs as each 429 answer was reported (the gate had already heard of it). */
  let pacingAt429s: number[];
  let api: GpuCloudClient;
  let spec: { pod_uuid: string; gpu_uuid: string; gpu_nums: number };

  beforeAll(async () => {
    t = await startTestEmulator({ rateLimit: RATE, balance: 1_000_000 });
    spec = { pod_uuid: (await pod(t, "ComfyUI")).uuid, gpu_uuid: await gpuUuid(t, "4090D"), gpu_nums: 1 };
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.admin("POST", "/reset"); // the seeded catalogue again, and an unused rate-limit window
    events = [];
    pacingAt429s = [];
    api = new GpuCloudClient({
      baseUrl: t.url,
      apiKey: DEMO_KEY,
      onRequest: (e) => {
        events.push(e);
        if (e.status === 429) pacingAt429s.push(api.pacingMs);
      },
    });
  });
  afterEach(() => api.close());

  /**
   * The gaps between consecutive sends once the pause after the first 429 was over, each beside the
   * smallest spacing the client reported at any 429 answer. The gate spaces each send at least its current
   * spacing after the previous one, and that spacing only grows from the first 429 on (it shrinks only after
   * 30 s without one), so every gap is at least that smallest spacing. This holds on the gate's own clock,
   * however a loaded machine spreads the sends in real time (which changes the rate learned and how many 429s
   * the server returns; the bench reports those, and test/sdk/pacing-gate.test.ts checks the learned rate).
   */
  function gapsAfterThePause(): { gaps: number[]; leastSpacing: number } {
    const refused = events.filter((e) => e.status === 429);
    const pauseEnd = Math.min(...refused.map((e) => e.sentAt + e.durationMs + (e.retryAfterMs ?? 1000)));
    const sends = events
      .map((e) => e.sentAt)
      .filter((t) => t >= pauseEnd)
      .sort((a, b) => a - b);
    return {
      gaps: sends.slice(1).map((t, i) => t - sends[i]),
      leastSpacing: Math.min(...pacingAt429s),
    };
  }

  it("learns the allowed rate from the first wave of 429s and stays under it", async () => {
    const balances = await Promise.all(Array.from({ length: 60 }, () => api.account.balance()));
    expect(balances).toHaveLength(60);
    expect(events.filter((e) => e.status === 429).length).toBeGreaterThan(0);
    // The exact rate learned depends on how the burst spread in real time; a sane one is all this checks.
    expect(api.pacingMs).toBeGreaterThanOrEqual(25);
    expect(api.pacingMs).toBeLessThanOrEqual(5000);
    // The old gate doubled and shrank its spacing, sending bursts closer together than it had learned.
    const { gaps, leastSpacing } = gapsAfterThePause();
    expect(gaps.length).toBeGreaterThan(0);
    expect(leastSpacing).toBeGreaterThan(0);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(leastSpacing);
  });

  it("polls for destroyed instances soon after the destroys they queued behind", async () => {
    const uuids = await seedRunning(40);
    const reads = new InstanceReads(api);
    let lastDestroyAnswered = 0;
    const gone = await Promise.all(
      uuids.map(async (uuid) => {
        await api.instances.destroy(uuid);
        lastDestroyAnswered = Math.max(lastDestroyAnswered, Date.now());
        await reads.waitUntilGone(uuid, { timeoutMs: 60_000, pollIntervalMs: 50 });
        return Date.now();
      }),
    );
    const walks = events.filter((e) => e.path.startsWith("/instance/list") && e.status === 200);
    expect(walks.length).toBeGreaterThanOrEqual(1);
    // The pause after a walk is 3 walks' worth of budget: 3 x 52.5 ms for one page. Judging the walk by
    // the seconds it queued behind 40 destroys (about 2 s) paused for about 6 s.
    expect(Math.max(...gone) - lastDestroyAnswered).toBeLessThan(2000);
  });

  async function seedRunning(count: number): Promise<string[]> {
    const store = t.running.emulator.rooms.find((r): r is InstancesRoom => r instanceof InstancesRoom)?.store;
    if (!store) throw new Error("the emulator has no instances room");
    const owner = userOfKeySpec(DEMO_KEY);
    const uuids = Array.from({ length: count }, () => store.createByPod(owner, spec).instance_uuid);
    await t.advance(120);
    return uuids;
  }
});
