/**
 * Coalesced reads as users meet them: the fleet program (Instances, each with an IdleClosePolicy) run
 * through `pulumi-gpucloud/testing` with either front door, one provider process per stack as the
 * harness keeps it. A refresh of all of them costs one walk of /instance/list however its reads arrive,
 * still shows this process's own writes and another client's changes, and waits poll once an interval.
 */
import { GpuCloudClient } from "pulumi-gpucloud/sdk";
import { SMOKE_PACE, BENCH_KEY, BenchCloud } from "../../bench/cloud";
import { DOORS, FLEET_PROGRAM, fleetConfig, frontDoorOf } from "../../bench/engine";
import { assertBuilt, ensurePackageLink } from "../../dev/self-link";
import { LIST_PAGE_SIZE, READ_SHARING_GAP_MS } from "../../provider/resources/instance/reads";
import { Stack, type FrontDoor, type FrontDoorFactory, type OperationResult } from "../../testing";

/** Instances of the stack, each with a policy. */
const N = 20;
/** Instances of the account that no stack knows, made straight in the emulator's store. */
const ELSEWHERE = 100;
/** Two pages per walk: the list holds every instance of the account. */
const PAGES = Math.ceil((N + ELSEWHERE) / LIST_PAGE_SIZE);

/**
 * Lets the engine's reads reach the provider in waves of `size`, each wave once every read of the one
 * before was answered: arrival spread made by the test, not left to the machine's speed.
 */
class ReadWaves {
  size = Infinity;
  private wave: Promise<unknown>[] = [];
  private before: Promise<unknown> = Promise.resolve();

  through<T>(read: () => Promise<T>): Promise<T> {
    if (this.wave.length >= this.size) {
      this.before = Promise.allSettled(this.wave);
      this.wave = [];
    }
    const answered = this.before.then(read);
    this.wave.push(answered);
    return answered;
  }
}

function inWaves(factory: FrontDoorFactory, waves: ReadWaves): FrontDoorFactory {
  return async (context) => {
    const door = await factory(context);
    const wrapped: FrontDoor = {
      admit: (registration) => door.admit(registration),
      stateType: (type) => door.stateType(type),
      configure: (config) => door.configure(config),
      check: (r, olds, news) => door.check(r, olds, news),
      diff: (r, id, olds, news) => door.diff(r, id, olds, news),
      create: (r, inputs) => door.create(r, inputs),
      read: (r, id, outputs, inputs) => waves.through(() => door.read(r, id, outputs, inputs)),
      update: (r, id, olds, news) => door.update(r, id, olds, news),
      delete: (r, id, outputs) => door.delete(r, id, outputs),
      get stderr() {
        return door.stderr;
      },
      get engineMessages() {
        return door.engineMessages;
      },
      close: () => door.close(),
    };
    return wrapped;
  };
}

/**
 * The list calls of one walk, and of one more for each pause of READ_SHARING_GAP_MS between two reads
 * that the operation's length leaves room for: one walk unless the machine stalls the reads that long.
 */
function oneWalkBound(result: OperationResult): number {
  return PAGES * (1 + Math.floor(result.durationMs / READ_SHARING_GAP_MS));
}

const ops = (result: OperationResult) =>
  Object.fromEntries(result.steps.filter((s) => s.op !== "same").map((s) => [s.name, s.op]));

describe.each(DOORS)(`${N} Instances with policies through the %s door`, (door) => {
  let cloud: BenchCloud;
  let api: GpuCloudClient;
  let stack: Stack;
  const waves = new ReadWaves();
  beforeAll(async () => {
    assertBuilt();
    ensurePackageLink();
    cloud = await BenchCloud.start(0, SMOKE_PACE.timeScale);
    cloud.seedRunning(cloud.specs(ELSEWHERE).map((spec, i) => ({ ...spec, title: `elsewhere-${i}` })));
    api = new GpuCloudClient({ baseUrl: cloud.url, apiKey: BENCH_KEY });
    stack = await Stack.open({
      program: FLEET_PROGRAM,
      project: "reads",
      stack: door,
      config: fleetConfig(cloud, N, SMOKE_PACE.pollIntervalMs),
      frontDoor: inWaves(frontDoorOf(door), waves),
    });
  });
  afterAll(async () => {
    // The emulator goes with its instances: no destroy needed.
    await stack.close();
    await api.close();
    await cloud.close();
  });

  const listCalls = async () => (await cloud.counts()).byEndpoint["GET /instance/list"] ?? 0;

  it("comes up polling once a poll interval, all instances waiting together", async () => {
    await cloud.clearLog();
    const up = await stack.up();
    expect(up.steps.filter((s) => s.op === "create")).toHaveLength(2 * N);
    const intervals = Math.ceil(up.durationMs / SMOKE_PACE.pollIntervalMs);
    // One walk per interval, plus the one listing the creates take before they are sent.
    expect(await listCalls()).toBeLessThanOrEqual(PAGES * (intervals + 1));
    expect((await cloud.counts()).byEndpoint["GET /instance/info"]).toBeUndefined();
  });

  it("refreshes every instance and policy with one walk when their reads arrive together", async () => {
    await cloud.clearLog();
    const refresh = await stack.refresh();
    expect(refresh.steps).toHaveLength(2 * N);
    expect(ops(refresh)).toEqual({});
    expect(await cloud.counts()).toEqual(
      expect.objectContaining({ byEndpoint: { "GET /instance/list": expect.any(Number) } }),
    );
    expect(await listCalls()).toBeLessThanOrEqual(oneWalkBound(refresh));
  });

  it("refreshes with one walk when the reads arrive in waves, each after the last wave was answered", async () => {
    waves.size = Math.ceil(N / 2);
    try {
      await cloud.clearLog();
      const refresh = await stack.refresh();
      expect(ops(refresh)).toEqual({});
      expect(await listCalls()).toBeLessThanOrEqual(oneWalkBound(refresh));
    } finally {
      waves.size = Infinity;
    }
  });

  it("shows what another client changed since the last refresh: a title, and an instance destroyed", async () => {
    const uuid = (name: string) => stack.current.resources.find((r) => r.name === name)!.id;
    await api.instances.updateTitle(uuid("fleet-3"), "changed elsewhere");
    await api.instances.destroy(uuid("fleet-7"));
    await cloud.clearLog();
    const refresh = await stack.refresh();
    expect(ops(refresh)).toEqual({ "fleet-3": "update", "fleet-7": "delete", "fleet-7-idle": "delete" });
    expect(refresh.steps.find((s) => s.name === "fleet-3")!.changes).toContainEqual(
      expect.objectContaining({ name: "title", new: "changed elsewhere" }),
    );
    expect(await listCalls()).toBeLessThanOrEqual(oneWalkBound(refresh));
  });

  it("shows the titles this process just wrote: a refresh after the update finds no drift", async () => {
    // A new provider process, whose refresh leaves a walk that every resource has read.
    await stack.setConfig({
      ...fleetConfig(cloud, N, SMOKE_PACE.pollIntervalMs),
      "bench:titlePrefix": "renamed",
    });
    await stack.refresh();
    const up = await stack.up();
    // Every title changes; fleet-7, which the last case destroyed, comes back.
    const updates = Object.fromEntries(Array.from({ length: N }, (_, i) => [`fleet-${i}`, "update"]));
    expect(ops(up)).toEqual({ ...updates, "fleet-7": "create", "fleet-7-idle": "create" });
    const refresh = await stack.refresh();
    expect(ops(refresh)).toEqual({});
    const instances = stack.current.resources.filter((r) => !r.name.endsWith("-idle"));
    expect(instances.map((r) => r.outputs.title).sort()).toEqual(
      Array.from({ length: N }, (_, i) => `renamed-${i}`).sort(),
    );
  });
});
