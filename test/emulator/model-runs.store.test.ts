import { Wallet } from "../../emulator/core/wallet";
import { AssetStore } from "../../emulator/assets/store";
import { ModelRunStore } from "../../emulator/model-runs/store";

const T0 = 1_800_000_000;

function setup() {
  let now = T0;
  let n = 0;
  const nextId = (prefix: string) => `${prefix}-${++n}`;
  const wallet = new Wallet(() => now, nextId);
  wallet.open("alice", "10");
  const store = new ModelRunStore(wallet, new AssetStore(), nextId);
  const advance = (seconds: number) => {
    const target = now + seconds;
    for (let due = store.nextDueAt(); due !== undefined && due <= target; due = store.nextDueAt()) {
      now = due;
      store.runDue(now);
    }
    now = target;
  };
  return { wallet, store, advance, now: () => now };
}

const submit = {
  idempotency_key: "k1",
  inputs: { model: "demo-video", prompt: "a cat", duration: 5, resolution: "1080p" },
};

describe("ModelRunStore (no HTTP)", () => {
  it("prices by duration and resolution, then completes after 5 s queued and 30 s running", () => {
    const { store, wallet, advance, now } = setup();
    const run = store.submit("key-a", "alice", submit, now());
    expect(run).toMatchObject({
      status: "queued",
      settlement_status: "pending",
      frozen_amount: "1.00000000",
      request_id: "k1",
    });
    expect(wallet.balance("alice")).toBe("9.00000000");
    advance(5);
    expect(store.list("key-a", { status: "running" }).total).toBe(1);
    advance(30);
    expect(store.list("key-a", {}).items[0]).toMatchObject({
      status: "completed",
      settlement_status: "settled",
    });
    expect(wallet.balance("alice")).toBe("9.00000000");
    expect(store.events("key-a", run.run_id).items.map((e) => e.event_type)).toEqual([
      "created",
      "reserved",
      "gateway_submitted",
      "gateway_refreshed",
      "settled",
    ]);
  });

  it("cancels before completion with a full release, and leaves a completed run completed", () => {
    const { store, wallet, advance, now } = setup();
    const early = store.submit("key-a", "alice", submit, now());
    const late = store.submit("key-a", "alice", { ...submit, idempotency_key: "k2" }, now());
    advance(6);
    expect(store.cancel("key-a", early.run_id, now())).toMatchObject({
      status: "cancelled",
      settlement_status: "released",
      released_amount: "1.00000000",
      error_code: "user_cancelled",
    });
    advance(30);
    expect(store.cancel("key-a", late.run_id, now())).toMatchObject({
      status: "completed",
      released_amount: "0.00000000",
    });
    expect(wallet.balance("alice")).toBe("9.00000000");
  });

  it("round-trips through snapshot and restore, idempotency included", () => {
    const a = setup();
    const run = a.store.submit("key-a", "alice", submit, a.now());
    const b = setup();
    b.store.restore(JSON.parse(JSON.stringify(a.store.snapshot())));
    expect(b.store.list("key-a", {})).toEqual(a.store.list("key-a", {}));
    expect(b.store.events("key-a", run.run_id)).toEqual(a.store.events("key-a", run.run_id));
    expect(b.store.submit("key-a", "alice", submit, b.now())).toMatchObject({
      run_id: run.run_id,
      idempotent_replay: true,
    });
  });
});
