import { Wallet } from "../../emulator/core/wallet";

/** The wallet is the money API other rooms build on (pre-deduction, settlement, release). */
describe("emulator wallet", () => {
  let now = 1_000;
  let counter = 0;
  const wallet = new Wallet(
    () => now,
    (prefix) => `${prefix}-${(counter += 1)}`,
  );
  beforeEach(() => {
    wallet.clear();
    wallet.open("u", "100");
    now = 1_000;
  });

  it("keeps exact decimals to 8 places", () => {
    wallet.charge("u", "0.1", { kind: "k", resource_id: "r", start_time: 0, end_time: 1 });
    wallet.charge("u", "0.2", { kind: "k", resource_id: "r", start_time: 0, end_time: 1 });
    expect(wallet.balance("u")).toBe("99.70000000");
    wallet.charge("u", "0.123456789", { kind: "k", resource_id: "r", start_time: 0, end_time: 1 });
    expect(wallet.balance("u")).toBe("99.57654321");
  });

  it("reserves, then settles the actual cost, releasing the rest and billing the cost", () => {
    const id = wallet.reserve("u", "10", { kind: "workflow_run", resource_id: "run-1" });
    expect(wallet.balance("u")).toBe("90.00000000");
    now = 1_025;
    const { bill, released } = wallet.settle(id, "7.5");
    expect(released).toBe("2.50000000");
    expect(wallet.balance("u")).toBe("92.50000000");
    expect(bill).toMatchObject({
      kind: "workflow_run",
      resource_id: "run-1",
      amount: "7.50000000",
      start_time: 1_000,
      end_time: 1_025,
    });
    expect(wallet.billsOf("u")).toEqual([bill]);
  });

  it("charges the shortfall when the actual cost exceeds the reservation", () => {
    const id = wallet.reserve("u", "10", { kind: "k", resource_id: "r" });
    expect(wallet.settle(id, "12").released).toBe("0.00000000");
    expect(wallet.balance("u")).toBe("88.00000000");
  });

  it("releases a whole reservation", () => {
    const id = wallet.reserve("u", "40", { kind: "k", resource_id: "r" });
    expect(wallet.release(id)).toBe("40.00000000");
    expect(wallet.balance("u")).toBe("100.00000000");
    expect(() => wallet.release(id)).toThrow(/not found/);
  });

  it("refuses a reservation the balance does not cover with 400 code 1", () => {
    expect(() => wallet.reserve("u", "100.00000001", { kind: "k", resource_id: "r" })).toThrow(
      expect.objectContaining({
        status: 400,
        code: 1,
        message: expect.stringMatching(/^insufficient balance: /),
      }),
    );
    expect(wallet.balance("u")).toBe("100.00000000");
  });

  it("survives a snapshot and restore", () => {
    const id = wallet.reserve("u", "5", { kind: "k", resource_id: "r" });
    const copy = new Wallet(
      () => now,
      (prefix) => `${prefix}-copy`,
    );
    copy.restore(JSON.parse(JSON.stringify(wallet.snapshot())));
    expect(copy.balance("u")).toBe("95.00000000");
    expect(copy.release(id)).toBe("5.00000000");
  });
});
