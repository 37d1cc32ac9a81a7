/**
 * The create path when answers are lost (provider/resources/instance/create.ts and lost-create/): each
 * case states what the cloud did and checks what the state and the cloud hold afterwards. The provider's
 * request timeout is 0.5 s, so the grace before a claim is 3 s and a claim waits 2.5 s for its rivals:
 * these waits run on the real clock, and no case needs them longer.
 */
import { GpuCloudClient, type Instance } from "pulumi-gpucloud/sdk";
import type { Harness, Props, ResourceState } from "../harness";
import { proxy } from "../support/dateless-proxy";
import { onCalls } from "../support/emulator-hooks";
import { initFailure, type InitFailure } from "../support/init-failure";
import { DOORS, gpucloudHarness, providerConfig } from "../support/providers";
import { startWorld, type World } from "../support/world";

const KEY = "team-key";
/** Another key of the same user (USER:KEY, docs/design/contracts.md#starting-it): its instances are listed too. */
const OTHER_KEY = "other-key";
const CONFIG = { "gpucloud:requestTimeoutMs": "500" };
const CREATE = "/instance/create_by_pod";
const PENDING_ID = /^pending-create:\d+:[0-9a-f]{8}$/;
/** How much later on the cloud's clock a later run comes, where its timing is not what a test is about. */
const LATER_RUN_SECONDS = 60;

jest.setTimeout(180_000);

describe("creates whose answers are lost", () => {
  let w: World;
  let other: GpuCloudClient;
  beforeAll(async () => {
    w = await startWorld({
      emulator: { apiKeys: [`team:${KEY}`, `team:${OTHER_KEY}`], balance: "1000000" },
      config: CONFIG,
      key: KEY,
    });
    other = new GpuCloudClient({ baseUrl: w.emu.url, apiKey: OTHER_KEY });
  });
  afterAll(async () => {
    await other?.close();
    await w?.stop();
  });
  const laterRuns: Promise<Harness>[] = [];
  afterEach(async () => {
    await Promise.allSettled(laterRuns.splice(0).map(async (run) => (await run).stop()));
  });
  beforeEach(async () => {
    w.emulator.faults.clear();
    for (const uuid of await w.instanceUuids()) await w.api.instances.destroy(uuid);
    await w.emu.admin("DELETE", "/requests");
  });

  const inputs = (more: Props = {}) => w.h.checked("Instance", { ...w.spec, ...more });
  const fault = (kind: string, more: Props = {}) =>
    w.emu.admin("POST", "/faults", { path: CREATE, kind, count: 1, ...more });
  const createCalls = async () =>
    ((await w.emu.admin("GET", "/requests")).body.requests as { path: string }[]).filter(
      (r) => r.path === CREATE,
    ).length;
  /** Runs `act` as each call to `path` reaches the emulator, before its faults. */
  const whenCalled = (path: string, act: () => void) =>
    onCalls(w.emulator, (call) => {
      if (call.path === path) act();
    });
  const titles = async () => {
    const all: Record<string, string> = {};
    for await (const i of w.api.instances.listAll()) all[i.instance_uuid] = i.title ?? "";
    return all;
  };

  /** Another deployer: creates the spec with the other key, and titles it after `titleAfterMs` (never when undefined). */
  const foreignCreate = async (titleAfterMs?: number): Promise<Instance> => {
    const made = await other.instances.createByPod({ pod_uuid: w.podUuid, gpu_uuid: w.gpu4090, gpu_nums: 1 });
    if (titleAfterMs !== undefined)
      setTimeout(() => void other.instances.updateTitle(made.instance_uuid, "theirs"), titleAfterMs);
    return made;
  };

  it("adopts the instance a dropped answer made, leaving exactly one, sent once", async () => {
    await fault("drop_after_commit");
    const state = await w.advancing(w.h.create("Instance", await inputs({ title: "lost answer" })));
    expect(await titles()).toEqual({ [state.id]: "lost answer" });
    expect(state.outputs).toMatchObject({ title: "lost answer", status: 2, pendingCreate: null });
    expect(await createCalls()).toBe(1);
  });

  it("adopts an instance the cloud committed after the client had timed out", async () => {
    // Past the request timeout, inside the settle time after it.
    await fault("late_commit", { ms: 750 });
    const state = await w.advancing(w.h.create("Instance", await inputs({ title: "late" })));
    expect(await titles()).toEqual({ [state.id]: "late" });
    expect(await createCalls()).toBe(1);
  });

  it("adopts the instance a lost answer made at once even when waitTimeoutSeconds is shorter than the grace", async () => {
    // The grace is 3 s: a deadline of 1 s used to give up on the instance and record a pending create.
    await fault("drop_after_commit");
    const state = await w.advancing(
      w.h.create("Instance", await inputs({ title: "short wait", waitTimeoutSeconds: 1 })),
    );
    expect(await titles()).toEqual({ [state.id]: "short wait" });
    expect(state.id).not.toMatch(PENDING_ID);
  });

  it.each(DOORS)(
    "destroys the instance whose title the cloud refuses, at once, naming the title, and leaves no claim token (%s door)",
    async (door) => {
      const refused = "forbidden word";
      let refusals = 0;
      const titlesSent: string[] = [];
      const gateway = await proxy(w.emu.url, {
        answer: (path, body) => {
          if (!path.endsWith("/instance/update_title")) return undefined;
          const { title } = JSON.parse(body) as { title?: string };
          titlesSent.push(title ?? "");
          if (title !== refused) return undefined;
          refusals++;
          return {
            status: 200,
            json: { code: 1, msg: "the title contains a word the platform does not allow" },
          };
        },
      });
      // A request timeout of 10 minutes: any wait the recovery scales by it would outlast this test.
      const patient = { "gpucloud:requestTimeoutMs": "600000" };
      const run = await gpucloudHarness({ door, config: providerConfig(gateway.url, KEY, patient) });
      try {
        const failure = await w
          .advancing(run.create("Instance", await run.checked("Instance", { ...w.spec, title: refused })))
          .catch((e: unknown) => e);
        expect(String(failure)).toMatch(
          /Could not create instance: the cloud refused its title "forbidden word" \(.*does not allow.*\), the mark that tells it is this stack's; fix title in your program\. The instance \S+ was destroyed so nothing is left billing\./,
        );
        expect(refusals).toBe(1);
        expect(titlesSent).toEqual([refused]);
        expect(await titles()).toEqual({});
      } finally {
        await run.stop();
        await gateway.close();
      }
    },
  );

  it("sends the create again when the lost call made nothing, and leaves one instance", async () => {
    await fault("reset");
    const state = await w.advancing(w.h.create("Instance", await inputs({ title: "again" })));
    expect(await titles()).toEqual({ [state.id]: "again" });
    expect(await createCalls()).toBe(2);
  });

  it("gives each of several parallel creates of one spec its own instance when most answers are lost", async () => {
    await fault("drop_after_commit", { count: 3 });
    const news = await Promise.all([0, 1, 2, 3].map((i) => inputs({ title: `p-${i}` })));
    const states = await w.advancing(Promise.all(news.map((n) => w.h.create("Instance", n))));
    expect(new Set(states.map((s) => s.id)).size).toBe(4);
    expect(await titles()).toEqual(Object.fromEntries(states.map((s, i) => [s.id, `p-${i}`])));
    expect(await createCalls()).toBe(4);
  });

  it("leaves alone an instance another key creates in the window and titles soon after", async () => {
    let theirs: Promise<Instance> | undefined;
    const undo = whenCalled(CREATE, () => (theirs ??= foreignCreate(200)));
    await fault("drop_after_commit");
    try {
      const state = await w.advancing(w.h.create("Instance", await inputs({ title: "ours" })));
      const foreign = (await theirs!).instance_uuid;
      expect(state.id).not.toBe(foreign);
      expect(await titles()).toEqual({ [state.id]: "ours", [foreign]: "theirs" });
    } finally {
      undo();
    }
  });

  it("leaves alone an instance another deployer titles late in the grace, long after a request or two", async () => {
    // The grace is 3 s at a 0.5 s request timeout: any creator that got its answer has titled by then.
    let theirs: Promise<Instance> | undefined;
    const undo = whenCalled(CREATE, () => (theirs ??= foreignCreate(2000)));
    await fault("drop_after_commit");
    try {
      const state = await w.advancing(w.h.create("Instance", await inputs({ title: "ours" })));
      const foreign = (await theirs!).instance_uuid;
      expect(state.id).not.toBe(foreign);
      expect(await titles()).toEqual({ [state.id]: "ours", [foreign]: "theirs" });
    } finally {
      undo();
    }
  });

  it("names the field in which an untitled instance of the same pod in its window differs, and never adopts it", async () => {
    let theirs: Promise<Instance> | undefined;
    const undo = whenCalled(CREATE, () => {
      theirs ??= other.instances.createByPod({ pod_uuid: w.podUuid, gpu_uuid: w.gpu4090, gpu_nums: 2 });
    });
    // Nothing made, and the deadline passes before the call has settled: not sent again.
    await fault("reset");
    let failure: unknown;
    try {
      failure = await w.h
        .create("Instance", await inputs({ title: "one-gpu", waitTimeoutSeconds: 1 }))
        .catch((e: unknown) => e);
    } finally {
      undo();
    }
    const near = (await theirs!).instance_uuid;
    expect(String(failure)).toContain(
      `instance ${near} appeared untitled in the window but was not adopted: gpuNums is 1 in your program but 2 on the instance`,
    );
    expect(String(failure)).toMatch(/so none was made; it was not sent again/);
    expect(await titles()).toEqual({ [near]: "" });
  });

  it("rides out an outage in the middle of a claim", async () => {
    // The claim's write is the first title change: the lost create's instance has none until adopted.
    let armed = false;
    const undo = whenCalled("/instance/update_title", () => {
      if (armed) return;
      armed = true;
      for (const path of ["/instance/list", "/instance/info"])
        w.emulator.faults.add({ path, kind: "http_503", count: 6 });
    });
    await fault("drop_after_commit");
    try {
      const state = await w.advancing(w.h.create("Instance", await inputs({ title: "through" })));
      expect(armed).toBe(true);
      expect(await titles()).toEqual({ [state.id]: "through" });
    } finally {
      undo();
    }
  });

  describe("when the outcome stays unknown", () => {
    /**
     * Creates with `lose` armed for the create call and the instance list failing from then on. It
     * waits the least it may (1 s): the record is written only once the settle time after the lost
     * answer has passed, whatever the deadline.
     */
    const pendingCreate = async (
      more: Props,
      lose: "drop_after_commit" | "reset",
    ): Promise<ResourceState> => {
      const news = await inputs({ waitTimeoutSeconds: 1, ...more });
      const undo = whenCalled(CREATE, () =>
        w.emulator.faults.add({ path: "/instance/list", kind: "http_503", probability: 1 }),
      );
      await fault(lose);
      try {
        const failure = await expectPending(w.h.create("Instance", news));
        return { id: failure.id, inputs: news, outputs: failure.properties };
      } finally {
        undo();
        w.emulator.faults.clear();
      }
    };

    it("records a pending create in state, and refresh, up and destroy of a later run resolve it", async () => {
      const later = nextRun();
      const forRefresh = await pendingCreate({ title: "refreshed", gpuNums: 1 }, "drop_after_commit");
      // Its replacement waits for the instance to run, within waitTimeoutSeconds.
      const forUp = await pendingCreate(
        { title: "replaced", gpuNums: 2, waitTimeoutSeconds: 2 },
        "drop_after_commit",
      );
      const forDestroy = await pendingCreate({ title: "destroyed", gpuNums: 4 }, "drop_after_commit");
      const neverMade = await pendingCreate({ title: "never", gpuNums: 8 }, "reset");
      expect(forRefresh.outputs.pendingCreate).toMatchObject({
        spec: { podUuid: w.podUuid, gpuUuid: w.gpu4090, gpuNums: 1 },
        reason: expect.stringContaining("listing the instances failed"),
      });
      const made = Object.keys(await titles());
      expect(made).toHaveLength(3);

      await w.emu.advance(LATER_RUN_SECONDS);
      const next = await later;
      const refreshed = await next.refresh("Instance", forRefresh);
      expect(made).toContain(refreshed.id);
      expect(refreshed.outputs).toMatchObject({
        instanceUuid: refreshed.id,
        title: "refreshed",
        pendingCreate: null,
      });

      const diff = await next.diff("Instance", forUp.id, forUp.outputs, forUp.inputs);
      expect(diff).toMatchObject({ changes: "some", replaces: ["pendingCreate"] });
      const replacement = await w.advancing(next.create("Instance", forUp.inputs));
      await next.delete("Instance", forUp);
      expect(made).toContain(replacement.id);

      await next.delete("Instance", forDestroy);
      expect(await next.refresh("Instance", neverMade)).toMatchObject({ id: "" });

      expect(await titles()).toEqual({ [refreshed.id]: "refreshed", [replacement.id]: "replaced" });
      expect(await createCalls()).toBe(4);
    });

    it("resolves several pending records of one spec together, one instance each", async () => {
      const later = nextRun();
      const a = await pendingCreate({ title: "a" }, "drop_after_commit");
      const b = await pendingCreate({ title: "b" }, "drop_after_commit");
      await w.emu.advance(LATER_RUN_SECONDS);
      const next = await later;
      const [ra, rb] = await Promise.all([next.refresh("Instance", a), next.refresh("Instance", b)]);
      expect(new Set([ra.id, rb.id]).size).toBe(2);
      expect(await titles()).toEqual({ [ra.id]: "a", [rb.id]: "b" });
    });

    it("destroys nothing when the only candidate of a pending record was titled by someone else", async () => {
      const later = nextRun();
      const record = await pendingCreate({ title: "mine" }, "drop_after_commit");
      const [candidate] = Object.keys(await titles());
      await other.instances.updateTitle(candidate, "theirs");
      await w.emu.advance(LATER_RUN_SECONDS);
      await (await later).delete("Instance", record);
      expect(await titles()).toEqual({ [candidate]: "theirs" });
    });

    it("lets only one of two stacks refreshing at once adopt the one instance both records could be", async () => {
      const later = [nextRun(), nextRun()];
      const undo = whenCalled(CREATE, () =>
        w.emulator.faults.add({ path: "/instance/list", kind: "http_503", probability: 1 }),
      );
      await fault("drop_after_commit");
      await fault("reset");
      let failures: InitFailure[];
      try {
        const news = await Promise.all(["a", "b"].map((title) => inputs({ title, waitTimeoutSeconds: 2 })));
        failures = await Promise.all(news.map((n) => expectPending(w.h.create("Instance", n))));
      } finally {
        undo();
        w.emulator.faults.clear();
      }
      const [only] = Object.keys(await titles());
      await w.emu.advance(LATER_RUN_SECONDS);
      const stacks = await Promise.all(later);
      const results = await Promise.all(
        stacks.map((h, i) =>
          h.refresh("Instance", { id: failures[i].id, inputs: {}, outputs: failures[i].properties }),
        ),
      );
      expect(results.map((r) => r.id).sort()).toEqual(["", only]);
      const winner = results.findIndex((r) => r.id === only);
      expect(await titles()).toEqual({ [only]: failures[winner].properties.title });
    });
  });

  /**
   * A new provider process on the same cloud: a later `pulumi` run. Tests start it first, so it boots
   * while this run's creates wait out their windows (it holds nothing of this run either way); each is
   * stopped after its test.
   */
  function nextRun(): Promise<Harness> {
    const run = gpucloudHarness({ config: providerConfig(w.emu.url, KEY, CONFIG) });
    run.catch(() => undefined);
    laterRuns.push(run);
    return run;
  }
});

/** The operation failed with ErrorResourceInitFailed carrying a pending-create id. */
async function expectPending(operation: Promise<unknown>): Promise<InitFailure> {
  const err = await operation.then(
    () => new Error("the create succeeded, but it was expected to leave a pending record"),
    (e: unknown) => e,
  );
  const failure = initFailure(err);
  if (!failure) throw err;
  expect(failure.id).toMatch(PENDING_ID);
  expect(failure.message).toMatch(/The stack now records a pending create \(pending-create:/);
  return failure;
}
