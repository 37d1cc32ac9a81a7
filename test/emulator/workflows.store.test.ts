import { ApiError } from "../../emulator/core/http/errors";
import { Wallet } from "../../emulator/core/wallet";
import { AssetStore } from "../../emulator/assets/store";
import { WorkflowStore } from "../../emulator/workflows/store";

const T0 = 1_800_000_000;

function setup() {
  let now = T0;
  let n = 0;
  const nextId = (prefix: string) => `${prefix}-${++n}`;
  const wallet = new Wallet(() => now, nextId);
  wallet.open("alice", "10");
  wallet.open("bob", "0.1");
  const assets = new AssetStore();
  const store = new WorkflowStore(wallet, assets, nextId);
  const advance = (seconds: number) => {
    const target = now + seconds;
    for (let due = store.nextDueAt(); due !== undefined && due <= target; due = store.nextDueAt()) {
      now = due;
      store.runDue(now);
    }
    now = target;
  };
  return { wallet, assets, store, advance, now: () => now };
}

const portraitInputs = { prompt: "hello", reference_image: "https://example.com/face.png" };

function rejection(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected an ApiError");
}

describe("WorkflowStore (no HTTP)", () => {
  it("walks queued -> running -> succeeded on the clock and settles compute by running time", () => {
    const { store, wallet, advance, now } = setup();
    const run = store.submit(
      "alice",
      { workflow_id: "wf_portrait_studio", idempotency_key: "k1", inputs: portraitInputs },
      now(),
    );
    expect(run.run_status).toBe("queued");
    expect(wallet.balance("alice")).toBe("9.50000000");
    expect(store.nextDueAt()).toBe(T0 + 5);
    advance(5);
    expect(store.runInfo("alice", run.run_order_id).run_status).toBe("running");
    advance(19);
    expect(store.runInfo("alice", run.run_order_id).run_status).toBe("running");
    advance(1);
    const done = store.runInfo("alice", run.run_order_id);
    expect(done).toMatchObject({
      run_status: "succeeded",
      compute_cost: "0.30000000",
      total_cost: "0.30000000",
      released_amount: "0.20000000",
      freeze_status: "released",
      settlement_status: "settled",
    });
    expect(wallet.balance("alice")).toBe("9.70000000");
    expect(store.nextDueAt()).toBeUndefined();
  });

  it("replays the same record for the same user, workflow and key, and charges once", () => {
    const { store, wallet, now } = setup();
    const request = { workflow_id: "wf_portrait_studio", idempotency_key: "same", inputs: portraitInputs };
    const first = store.submit("alice", request, now());
    const second = store.submit("alice", { ...request, inputs: { prompt: 1 } }, now());
    expect(second.run_order_id).toBe(first.run_order_id);
    expect(second.idempotent_replay).toBe(true);
    expect(wallet.balance("alice")).toBe("9.50000000");
  });

  it("refuses a quote the balance cannot cover and keeps no record", () => {
    const { store, now } = setup();
    const error = rejection(() =>
      store.submit(
        "bob",
        { workflow_id: "wf_portrait_studio", idempotency_key: "k", inputs: portraitInputs },
        now(),
      ),
    );
    expect(error.message).toMatch(/^insufficient balance/);
    expect(store.runList("bob", {}).total).toBe(0);
  });

  it("round-trips runs and idempotency keys through snapshot and restore", () => {
    const a = setup();
    const run = a.store.submit(
      "alice",
      { workflow_id: "wf_portrait_studio", idempotency_key: "k", inputs: portraitInputs },
      a.now(),
    );
    const b = setup();
    b.store.restore(JSON.parse(JSON.stringify(a.store.snapshot())));
    expect(b.store.runInfo("alice", run.run_order_id)).toEqual(a.store.runInfo("alice", run.run_order_id));
    const replay = b.store.submit(
      "alice",
      { workflow_id: "wf_portrait_studio", idempotency_key: "k" },
      b.now(),
    );
    expect(replay).toMatchObject({ run_order_id: run.run_order_id, idempotent_replay: true });
    expect(b.store.nextDueAt()).toBe(T0 + 5);
  });
});
