import { PacingGate } from "../../sdk/transport";

async function timed(fn: () => Promise<void>): Promise<number> {
  const start = Date.now();
  await fn();
  return Date.now() - start;
}

describe("the client-wide pacing gate", () => {
  it("lets requests straight through while nothing was rate limited", async () => {
    const gate = new PacingGate();
    expect(
      await timed(() => Promise.all([gate.wait(), gate.wait(), gate.wait()]).then(() => undefined)),
    ).toBeLessThan(20);
  });

  it("holds every caller until Retry-After has passed, then spaces them out", async () => {
    const gate = new PacingGate();
    gate.rateLimited(120, Date.now());
    const released: number[] = [];
    const start = Date.now();
    await Promise.all([0, 1, 2].map(() => gate.wait().then(() => released.push(Date.now() - start))));
    released.sort((a, b) => a - b);
    expect(released[0]).toBeGreaterThanOrEqual(115);
    expect(released[1] - released[0]).toBeGreaterThanOrEqual(45);
    expect(released[2] - released[1]).toBeGreaterThanOrEqual(45);
  });

  it("counts a wave of 429s to requests sent together once", () => {
    let now = 1000;
    const gate = new PacingGate(() => now);
    const sentAt = now;
    now += 5;
    for (let i = 0; i < 6; i++) gate.rateLimited(0, sentAt);
    expect(gate.spacingMs).toBe(50);
    now += 100;
    gate.rateLimited(0, now - 1);
    expect(gate.spacingMs).toBe(100);
  });

  it("forgets the spacing after successes", async () => {
    const gate = new PacingGate();
    gate.rateLimited(0, Date.now());
    for (let i = 0; i < 20; i++) gate.succeeded();
    expect(gate.spacingMs).toBe(0);
    await gate.wait();
    expect(await timed(() => gate.wait())).toBeLessThan(20);
  });

  it("stops waiting when the caller aborts", async () => {
    const gate = new PacingGate();
    gate.rateLimited(10_000, Date.now());
    await expect(gate.wait(AbortSignal.timeout(20))).rejects.toMatchObject({ name: "TimeoutError" });
  });
});
