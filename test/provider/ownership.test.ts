/**
 * Ownership in a shared account: two stacks of one account (here two keys of one user, so that a fault
 * can be aimed at one stack's calls; the cloud lists the same instances to both) never take, share or
 * orphan each other's instances. Each case is one that broke before every instance carried its owner's
 * mark, through both front doors:
 * 1. a pending record taken over by a sibling of the same spec, then dropped;
 * 2. the cloud's clock an hour ahead or behind, with and without a Date header;
 * 3. destroy and refresh of one stack's pending record while the other stack made an untitled instance
 *    in its window;
 * 4. a claim write carried out 2.5 request timeouts late, while another stack claims the same instance;
 * 5. one stack's lost create (nothing made) while the other creates the same spec untitled;
 * 6. inside one stack, a pending record that made nothing and an untitled sibling made in its window.
 * The provider's request timeout is 0.5 s: the grace before a claim is 3 s, on the real clock. Case 1's
 * next run is a new provider process, as a later `pulumi up` is; elsewhere a stack resolves its records
 * in the process that wrote them (a provider process costs a second of CPU to start, and what a record
 * is resolved by is its stored window, not the process).
 */
import { fingerprint } from "pulumi-gpucloud/emulator";
import { GpuCloudClient } from "pulumi-gpucloud/sdk";
import { RESOURCE_NAME_KEY } from "../../provider/framework/check";
import type { Harness, Props, ResourceState } from "../harness";
import { startTestEmulator, type TestEmulator } from "../emulator/helpers";
import { advancing } from "../support/clock";
import { datelessProxy } from "../support/dateless-proxy";
import { onCalls } from "../support/emulator-hooks";
import { initFailure, type InitFailure } from "../support/init-failure";
import { DOORS, gpucloudHarness, providerConfig, type Door } from "../support/providers";
import { titlesIn } from "../support/world";

const USER = "team";
const KEY_A = "stack-a-key";
const KEY_B = "stack-b-key";
const CONFIG = { "gpucloud:requestTimeoutMs": "500" };
const CREATE = "/instance/create_by_pod";
const LIST = "/instance/list";
const TITLE = "/instance/update_title";
/** 2.5 request timeouts: within the late-commit model (3), past the claim's old wait (2). */
const LATE_CLAIM_MS = 1250;

jest.setTimeout(300_000);

interface Cloud {
  emu: TestEmulator;
  /** The URL the stacks use: the emulator's, or a proxy's in front of it. */
  url: string;
  api: GpuCloudClient;
  spec: Props;
  close(): Promise<void>;
}

/**
 * How the cloud's clock runs: frozen and moved by each case (the default), or, with an offset, at real
 * speed that far from this machine's clock (a clock moved ahead by the case would soon erase the offset),
 * its instances booting in a second.
 */
interface CloudClock {
  clockOffset?: number;
  withoutDate?: boolean;
}

async function startCloud(options: CloudClock = {}): Promise<Cloud> {
  const skewed = options.clockOffset !== undefined;
  const emu = await startTestEmulator({
    apiKeys: [`${USER}:${KEY_A}`, `${USER}:${KEY_B}`],
    balance: "1000000",
    startTime: Math.floor(Date.now() / 1000) + (options.clockOffset ?? 0),
    ...(skewed ? { timeScale: 1, durations: { boot: 1 } } : {}),
  });
  const proxy = options.withoutDate ? await datelessProxy(emu.url) : undefined;
  const api = new GpuCloudClient({ baseUrl: emu.url, apiKey: KEY_A });
  const [pod] = (await api.catalogue.pods({ page: 1, page_size: 100, name: "ComfyUI" })).pod_list;
  const gpu = (await api.catalogue.gpus()).gpu_list.find((g) => g.gpu_name === "4090D")!;
  return {
    emu,
    url: proxy?.url ?? emu.url,
    api,
    spec: { podUuid: pod.uuid, gpuUuid: gpu.gpu_uuid, gpuNums: 1 },
    async close() {
      await api.close();
      await proxy?.close();
      await emu.close();
    },
  };
}

/**
 * One case's world: its own cloud, the stacks it starts (each a provider process), and the hooks it
 * sets on the emulator, so that cases run at once without meeting.
 */
class Scene {
  private readonly running: Harness[] = [];
  private readonly hooks: (() => void)[] = [];

  constructor(
    readonly door: Door,
    readonly cloud: Cloud,
    /** The cloud's clock is frozen: waits end only while `run` moves it. */
    private readonly frozen: boolean,
  ) {}

  static async start(door: Door, clock: CloudClock = {}): Promise<Scene> {
    return new Scene(door, await startCloud(clock), clock.clockOffset === undefined);
  }

  /** A stack (a `pulumi` run: one provider process) with `key`. */
  async stack(key: string): Promise<Harness> {
    const h = await gpucloudHarness({ door: this.door, config: providerConfig(this.cloud.url, key, CONFIG) });
    this.running.push(h);
    return h;
  }

  /** Checked inputs of a resource named `name`, as its program declares them. */
  named(h: Harness, name: string, more: Props = {}, olds: Props = {}): Promise<Props> {
    return h.checked("Instance", { ...this.cloud.spec, [RESOURCE_NAME_KEY]: name, ...more }, olds);
  }

  /** Every instance's title, from the emulator's own state (no API call, no fault). */
  titles(): Record<string, string> {
    return Object.fromEntries(titlesIn(this.cloud.emu.running.emulator));
  }

  /** Runs `act` as each call of `key` to `path` reaches the emulator, before its faults. */
  whenCalled(key: string, path: string, act: () => void): void {
    const fp = fingerprint(key);
    this.hooks.push(
      onCalls(this.cloud.emu.running.emulator, (call) => {
        if (call.key === fp && call.path === path) act();
      }),
    );
  }

  /** The next `times` calls of `key` to `path` fail this way. */
  failNext(key: string, path: string, kind: string, more: Props = {}, times = 1): void {
    let left = times;
    this.whenCalled(key, path, () => {
      if (left <= 0) return;
      left--;
      this.cloud.emu.running.emulator.faults.add({ path, kind: kind as "reset", count: 1, ...more });
    });
  }

  /** Once `creates` create calls of `key` arrived, every instance listing of `key` fails. */
  listDownAfterCreate(key: string, creates = 1): void {
    let arrived = 0;
    let down = false;
    this.whenCalled(key, CREATE, () => (down = ++arrived >= creates));
    this.whenCalled(key, LIST, () => {
      if (down) this.cloud.emu.running.emulator.faults.add({ path: LIST, kind: "http_503", count: 1 });
    });
  }

  /** Undoes every hook, the latest first (hooks stack). */
  undoHooks(): void {
    this.hooks
      .splice(0)
      .reverse()
      .forEach((undo) => undo());
  }

  /** Runs `work` while the frozen clock moves (a clock running at real speed moves by itself). */
  run<T>(work: Promise<T>): Promise<T> {
    return this.frozen ? advancing(this.cloud.emu, work) : work;
  }

  async close(): Promise<void> {
    this.undoHooks();
    await Promise.all(this.running.splice(0).map((h) => h.stop()));
    await this.cloud.close();
  }
}

/** Runs `body` in a scene of its own, and closes it whatever happens. */
async function inScene(
  door: Door,
  body: (scene: Scene) => Promise<void>,
  clock: CloudClock = {},
): Promise<void> {
  const scene = await Scene.start(door, clock);
  try {
    await body(scene);
  } finally {
    await scene.close();
  }
}

describe.each(DOORS)("two stacks of one account, through the %s door", (door: Door) => {
  it.concurrent(
    "1: binds a pending record to its own resource: a sibling of the same spec never takes it over",
    () =>
      inScene(door, async (s) => {
        const first = await s.stack(KEY_A);
        const w0 = await s.named(first, "w0", { waitTimeoutSeconds: 1 });
        s.failNext(KEY_A, CREATE, "drop_after_commit");
        s.listDownAfterCreate(KEY_A);
        const record = await pendingRecord(first, w0);
        s.undoHooks();
        const [made] = Object.keys(s.titles());

        // The next up: Check and Diff of w0 (its record is replaced), a new sibling x, both creates at
        // once, then the Delete of w0's record.
        const next = await s.stack(KEY_A);
        const w0Again = await s.named(next, "w0", {}, record.inputs);
        expect(w0Again.title).toBe(w0.title);
        expect((await next.diff("Instance", record.id, record.outputs, w0Again)).replaces).toEqual([
          "pendingCreate",
        ]);
        const x = await s.named(next, "x");
        const [w0State, xState] = await s.run(
          Promise.all([next.create("Instance", w0Again), next.create("Instance", x)]),
        );
        await next.delete("Instance", record);
        expect(w0State.id).toBe(made);
        expect(xState.id).not.toBe(made);
        expect(s.titles()).toEqual({ [made]: w0.title, [xState.id]: x.title });
      }),
  );

  it.concurrent(
    "1: keeps a pending record whose outcome is still unknown when its Delete cannot tell, saying what to do",
    () =>
      inScene(door, async (s) => {
        const first = await s.stack(KEY_A);
        s.failNext(KEY_A, CREATE, "drop_after_commit");
        s.listDownAfterCreate(KEY_A);
        const record = await pendingRecord(first, await s.named(first, "w0", { waitTimeoutSeconds: 1 }));
        const [made] = Object.keys(s.titles());

        const next = first;
        const refused = await next.delete("Instance", record).catch((e: unknown) => e);
        expect(String(refused)).toMatch(
          new RegExp(
            `Could not resolve the pending create ${record.id} .*listing the instances failed.*The stack keeps the record`,
          ),
        );
        expect(Object.keys(s.titles())).toEqual([made]);
        s.undoHooks();
        await s.run(next.delete("Instance", record));
        expect(s.titles()).toEqual({});
      }),
  );

  it.concurrent(
    "3: destroy and refresh of one stack's pending record never touch the untitled instance the other made in its window",
    () =>
      inScene(door, async (s) => {
        const a = await s.stack(KEY_A);
        const b = await s.stack(KEY_B);
        const created: Promise<ResourceState>[] = [];
        const aInputs = await Promise.all(["a0", "a1"].map((name) => s.named(a, name)));
        s.whenCalled(
          KEY_B,
          CREATE,
          () => void created.push(s.run(a.create("Instance", aInputs[created.length]))),
        );
        s.failNext(KEY_B, CREATE, "reset", {}, 2);
        s.listDownAfterCreate(KEY_B, 2);
        const bInputs = await Promise.all(
          ["b-destroyed", "b-refreshed"].map((name) => s.named(b, name, { waitTimeoutSeconds: 1 })),
        );
        const records = await Promise.all(bInputs.map((inputs) => pendingRecord(b, inputs)));
        const aStates = await Promise.all(created);
        s.undoHooks();
        const theirs = Object.fromEntries(aStates.map((state, i) => [state.id, aInputs[i].title]));
        expect(s.titles()).toEqual(theirs);

        const bLater = b;
        await s.run(bLater.delete("Instance", records[0]));
        expect(await s.run(bLater.refresh("Instance", records[1]))).toMatchObject({ id: "" });
        expect(s.titles()).toEqual(theirs);
      }),
  );

  it.concurrent(
    "4: lets exactly one of two stacks claim an instance when one claim write lands 2.5 request timeouts late",
    () =>
      inScene(door, async (s) => {
        const [a, b] = [await s.stack(KEY_A), await s.stack(KEY_B)];
        // A's create is carried out after its answer was lost, once B's create went out (nothing made):
        // the instance falls in the window of both.
        s.failNext(KEY_A, CREATE, "late_commit", { ms: 1000 });
        s.failNext(KEY_B, CREATE, "reset");
        s.listDownAfterCreate(KEY_A);
        s.listDownAfterCreate(KEY_B);
        const records = await Promise.all([
          pendingRecord(a, await s.named(a, "a", { title: "a", waitTimeoutSeconds: 2 })),
          pendingRecord(b, await s.named(b, "b", { title: "b", waitTimeoutSeconds: 2 })),
        ]);
        s.undoHooks();
        const [only] = Object.keys(s.titles());

        // The first claim write to reach the cloud is held past its timeout, then carried out.
        let late = false;
        for (const key of [KEY_A, KEY_B]) {
          s.whenCalled(key, TITLE, () => {
            if (late) return;
            late = true;
            s.cloud.emu.running.emulator.faults.add({
              path: TITLE,
              kind: "late_commit",
              ms: LATE_CLAIM_MS,
              count: 1,
            });
          });
        }
        const later = [a, b];
        const results = await s.run(Promise.all(later.map((h, i) => h.refresh("Instance", records[i]))));
        expect(late).toBe(true);
        expect(results.map((r) => r.id).sort()).toEqual(["", only]);
        const winner = results.findIndex((r) => r.id === only);
        expect(s.titles()).toEqual({ [only]: ["a", "b"][winner] });
      }),
  );

  it.concurrent(
    "5: never claims the untitled instance another stack created while its own lost create made nothing",
    () =>
      inScene(door, async (s) => {
        const [a, b] = [await s.stack(KEY_A), await s.stack(KEY_B)];
        const aInputs = await s.named(a, "a");
        let aCreated: Promise<ResourceState> | undefined;
        s.whenCalled(KEY_B, CREATE, () => (aCreated ??= s.run(a.create("Instance", aInputs))));
        s.failNext(KEY_B, CREATE, "http_500");
        const bState = await s.run(b.create("Instance", await s.named(b, "b")));
        const aState = await aCreated!;
        expect(bState.id).not.toBe(aState.id);
        expect(s.titles()).toEqual({ [aState.id]: aInputs.title, [bState.id]: bState.outputs.title });
      }),
  );

  it.concurrent(
    "6: never resolves a pending record to the untitled sibling the same stack creates in its window",
    () =>
      inScene(door, async (s) => {
        const first = await s.stack(KEY_A);
        s.failNext(KEY_A, CREATE, "reset");
        s.listDownAfterCreate(KEY_A);
        const record = await pendingRecord(
          first,
          await s.named(first, "t", { title: "t", waitTimeoutSeconds: 1 }),
        );
        s.undoHooks();
        expect(record.outputs.pendingCreate).toMatchObject({ windowEnd: null });

        const next = first;
        const t = await s.named(next, "t", { title: "t" }, record.inputs);
        const sibling = await s.named(next, "s");
        const [tState, sState] = await s.run(
          Promise.all([next.create("Instance", t), next.create("Instance", sibling)]),
        );
        await next.delete("Instance", record);
        expect(tState.id).not.toBe(sState.id);
        expect(s.titles()).toEqual({ [tState.id]: "t", [sState.id]: sibling.title });
      }),
  );

  it.concurrent.each([
    { clockOffset: -3600, withoutDate: true },
    { clockOffset: -3600, withoutDate: false },
    { clockOffset: 3600, withoutDate: true },
    { clockOffset: 3600, withoutDate: false },
  ])(
    "2: with the cloud's clock %o from this machine's, adopts what a lost create made and resolves a pending record in a later run",
    (clock) =>
      inScene(
        door,
        async (s) => {
          const h = await s.stack(KEY_A);
          const inputs = (name: string, more: Props = {}) => s.named(h, name, more);
          s.failNext(KEY_A, CREATE, "drop_after_commit");
          const adopted = await s.run(h.create("Instance", await inputs("lost")));
          s.undoHooks();

          s.failNext(KEY_A, CREATE, "drop_after_commit");
          s.listDownAfterCreate(KEY_A);
          const record = await pendingRecord(h, await inputs("pending", { waitTimeoutSeconds: 1 }));
          s.undoHooks();
          const later = h;
          const resolved = await s.run(later.refresh("Instance", record));

          expect(adopted.id).not.toBe(resolved.id);
          expect(s.titles()).toEqual({
            [adopted.id]: adopted.outputs.title,
            [resolved.id]: record.inputs.title,
          });
        },
        clock,
      ),
  );
});

/** Creates `inputs`, expecting the outcome to stay unknown: the pending record the state then holds. */
async function pendingRecord(h: Harness, inputs: Props): Promise<ResourceState> {
  const failure = await expectPending(h.create("Instance", inputs));
  return { id: failure.id, inputs, outputs: failure.properties };
}

async function expectPending(operation: Promise<unknown>): Promise<InitFailure> {
  const err = await operation.then(
    () => new Error("the create succeeded, but it was expected to leave a pending record"),
    (e: unknown) => e,
  );
  const failure = initFailure(err);
  if (!failure?.id.startsWith("pending-create:")) throw err;
  return failure;
}
