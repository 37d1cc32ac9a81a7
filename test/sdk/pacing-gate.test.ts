import { PacingGate } from "../../sdk/transport";

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = Date.now();
  await fn();
  return Date.now() - start;
}

/** A gate on a clock the test moves; only waits that are not held may be awaited on it. */
function clocked(): { gate: PacingGate; at(ms: number): void } {
  let now = 0;
  return { gate: new PacingGate(() => now), at: (ms) => (now = ms) };
}

describe("the client-wide pacing gate", () => {
  it("lets requests straight through while nothing was rate limited", async () => {
    const gate = new PacingGate();
    expect(await timed(() => Promise.all([gate.wait(), gate.wait(), gate.wait()]))).toBeLessThan(20);
  });

  it("paces at the rate the server accepted in the second before the refused send", async () => {
    const { gate, at } = clocked();
    for (let t = 0; t < 1000; t += 100) {
      at(t);
      await gate.wait();
    }
    at(950);
    const refused = await gate.wait();
    at(960);
    gate.rateLimited(1000, refused);
    // Ten accepted in that second: 100 ms apart, plus the 5 % margin.
    expect(gate.spacingMs).toBeCloseTo(105, 5);
  });

  it("learns from a burst refused together as one wave, counting only what was accepted", async () => {
    const { gate, at } = clocked();
    at(5000);
    const sent = await Promise.all(Array.from({ length: 32 }, () => gate.wait()));
    at(5010);
    for (const sentAt of sent.slice(10)) gate.rateLimited(1000, sentAt);
    expect(gate.spacingMs).toBeCloseTo(105, 5);
  });

  it("guesses a short spacing when the server accepted nothing, since that says nothing of its rate", async () => {
    const { gate, at } = clocked();
    at(0);
    const refused = await Promise.all(Array.from({ length: 8 }, () => gate.wait()));
    at(5);
    for (const sentAt of refused) gate.rateLimited(1000, sentAt);
    expect(gate.spacingMs).toBe(50);
  });

  it("widens the spacing by a quarter when refused again while pacing", async () => {
    const { gate, at } = clocked();
    at(0);
    const burst = await Promise.all(Array.from({ length: 12 }, () => gate.wait()));
    for (const sentAt of burst.slice(10)) gate.rateLimited(1000, sentAt);
    expect(gate.spacingMs).toBeCloseTo(105, 5);
    // After the pause, paced sends; one of them is refused anyway (the key is shared, say).
    for (let t = 1000; t <= 2050; t += 105) {
      at(t);
      await gate.wait();
    }
    at(2060);
    gate.rateLimited(1000, 2050);
    expect(gate.spacingMs).toBeCloseTo(105 * 1.25, 5);
  });

  it("holds every caller until Retry-After has passed, then spaces them out", async () => {
    const gate = new PacingGate();
    const sent = await Promise.all(Array.from({ length: 20 }, () => gate.wait()));
    gate.rateLimited(120, sent[19]);
    const spacing = gate.spacingMs;
    expect(spacing).toBeCloseTo(1050 / 19, 5);
    const released: number[] = [];
    const start = Date.now();
    await Promise.all([0, 1, 2].map(() => gate.wait().then(() => released.push(Date.now() - start))));
    released.sort((a, b) => a - b);
    expect(released[0]).toBeGreaterThanOrEqual(115);
    expect(released[1] - released[0]).toBeGreaterThanOrEqual(spacing - 5);
    expect(released[2] - released[1]).toBeGreaterThanOrEqual(spacing - 5);
  });

  it("keeps the learned spacing for 30 s without 429s, then forgets it as requests succeed", async () => {
    const { gate, at } = clocked();
    at(0);
    const burst = await Promise.all(Array.from({ length: 11 }, () => gate.wait()));
    gate.rateLimited(1000, burst[10]);
    for (let i = 0; i < 50; i++) gate.succeeded();
    expect(gate.spacingMs).toBeCloseTo(105, 5);
    at(30_000);
    for (let i = 0; i < 50; i++) gate.succeeded();
    expect(gate.spacingMs).toBe(0);
  });

  it("stops waiting when the caller aborts", async () => {
    const gate = new PacingGate();
    gate.rateLimited(10_000, Date.now());
    await expect(gate.wait(AbortSignal.timeout(20))).rejects.toMatchObject({ name: "TimeoutError" });
  });
});
