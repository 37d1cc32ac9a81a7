import { PacingGate, type GatePass } from "../../sdk/pacing-gate";
import { MAX_TIMER_MS } from "pulumi-gpucloud/sdk";
import { FakeClock, settle } from "./fake-clock";

function gateAt(start = 0, maxPauseMs?: number): { gate: PacingGate; clock: FakeClock } {
  const clock = new FakeClock(start);
  return { gate: new PacingGate({ clock, maxPauseMs }), clock };
}

/** A send the gate lets through at once (the clock does not move). */
async function send(gate: PacingGate): Promise<number> {
  const pass = await gate.wait();
  if (pass.kind !== "send") throw new Error(`expected a send, got ${JSON.stringify(pass)}`);
  return pass.sentAt;
}

/** Starts a wait and records what it resolves with. */
function waiting(gate: PacingGate, deadline?: number): { pass?: GatePass } {
  const slot: { pass?: GatePass } = {};
  void gate.wait({ deadline }).then((pass) => (slot.pass = pass));
  return slot;
}

describe("the client-wide pacing gate", () => {
  it("lets requests straight through while nothing was rate limited", async () => {
    const { gate } = gateAt(500);
    expect(await Promise.all([send(gate), send(gate), send(gate)])).toEqual([500, 500, 500]);
  });

  it("paces at the rate the server accepted in the second before the refused send", async () => {
    const { gate, clock } = gateAt();
    for (let t = 0; t < 1000; t += 100) {
      await clock.advanceTo(t);
      await send(gate);
    }
    await clock.advanceTo(950);
    const refused = await send(gate);
    await clock.advanceTo(960);
    gate.rateLimited(1000, refused);
    // Ten accepted in that second: 100 ms apart, plus the 5 % margin.
    expect(gate.spacingMs).toBeCloseTo(105, 5);
  });

  it("learns from a burst refused together as one wave, counting only what was accepted", async () => {
    const { gate, clock } = gateAt(5000);
    const sent = await Promise.all(Array.from({ length: 32 }, () => send(gate)));
    await clock.advanceTo(5010);
    for (const sentAt of sent.slice(10)) gate.rateLimited(1000, sentAt);
    expect(gate.spacingMs).toBeCloseTo(105, 5);
  });

  it("learns the emulator's --rate-limit 20 from a burst of 32: twenty a second, 5 % apart", async () => {
    // What test/perf/rate-limited.test.ts sends against the emulator, on a clock that no load can skew:
    // 32 sends at once, of which the server accepts 20 and refuses 12.
    const { gate, clock } = gateAt(10_000);
    const sent = await Promise.all(Array.from({ length: 31 }, () => send(gate)));
    // A straggler of the same burst, sent a little later but before any 429 came back.
    await clock.advanceTo(10_004);
    sent.push(await send(gate));
    await clock.advanceTo(10_010);
    const refused = sent.slice(20);
    gate.rateLimited(1000, refused[0]);
    for (const sentAt of refused.slice(1, -1)) gate.rateLimited(1000, sentAt);
    // The straggler's 429 arrives last, after the gate began pausing: it still belongs to the first wave.
    await clock.advanceTo(10_030);
    gate.rateLimited(1000, refused[refused.length - 1]);
    expect(gate.spacingMs).toBeCloseTo(1050 / 20, 5);
    expect(gate.spacingMs).toBeGreaterThanOrEqual(1000 / 20);
    expect(gate.spacingMs).toBeLessThan((1.25 * 1000) / 20);
  });

  it("guesses a short spacing when the server accepted nothing, since that says nothing of its rate", async () => {
    const { gate, clock } = gateAt();
    const refused = await Promise.all(Array.from({ length: 8 }, () => send(gate)));
    await clock.advanceTo(5);
    for (const sentAt of refused) gate.rateLimited(1000, sentAt);
    expect(gate.spacingMs).toBe(50);
  });

  it("widens the spacing by a quarter when refused again while pacing", async () => {
    const { gate, clock } = gateAt();
    const burst = await Promise.all(Array.from({ length: 12 }, () => send(gate)));
    for (const sentAt of burst.slice(10)) gate.rateLimited(1000, sentAt);
    expect(gate.spacingMs).toBeCloseTo(105, 5);
    // After the pause, paced sends; one of them is refused anyway (the key is shared, say).
    for (let t = 1000; t <= 2050; t += 105) {
      await clock.advanceTo(t);
      await send(gate);
    }
    await clock.advanceTo(2060);
    gate.rateLimited(1000, 2050);
    expect(gate.spacingMs).toBeCloseTo(105 * 1.25, 5);
  });

  it("holds every caller until Retry-After has passed, then spaces them out", async () => {
    const { gate, clock } = gateAt();
    const sent = await Promise.all(Array.from({ length: 20 }, () => send(gate)));
    gate.rateLimited(120, sent[19]);
    const spacing = gate.spacingMs;
    expect(spacing).toBeCloseTo(1050 / 19, 5);
    const held = [waiting(gate), waiting(gate), waiting(gate)];
    await clock.advanceTo(119);
    expect(held.map((h) => h.pass)).toEqual([undefined, undefined, undefined]);
    await clock.advanceTo(1000);
    const sentAt = held.map((h) => (h.pass?.kind === "send" ? h.pass.sentAt : NaN)).sort((a, b) => a - b);
    expect(sentAt[0]).toBe(120);
    expect(sentAt[1] - sentAt[0]).toBeGreaterThanOrEqual(spacing);
    expect(sentAt[2] - sentAt[1]).toBeGreaterThanOrEqual(spacing);
  });

  it("keeps the learned spacing for 30 s without 429s, then forgets it as requests succeed", async () => {
    const { gate, clock } = gateAt();
    const burst = await Promise.all(Array.from({ length: 11 }, () => send(gate)));
    gate.rateLimited(1000, burst[10]);
    for (let i = 0; i < 50; i++) gate.succeeded();
    expect(gate.spacingMs).toBeCloseTo(105, 5);
    await clock.advanceTo(30_000);
    for (let i = 0; i < 50; i++) gate.succeeded();
    expect(gate.spacingMs).toBe(0);
  });

  it("stops waiting when the caller aborts", async () => {
    const { gate } = gateAt();
    gate.rateLimited(10_000, 0);
    const controller = new AbortController();
    const held = gate.wait({ signal: controller.signal });
    await settle();
    controller.abort(new Error("caller gave up"));
    await expect(held).rejects.toThrow("caller gave up");
  });
});

describe("the pacing gate under a Retry-After it cannot honour", () => {
  it("turns callers away at once while the cloud asks for longer than the longest pause", async () => {
    const { gate, clock } = gateAt(0, 120_000);
    const year = 365 * 24 * 3600 * 1000;
    gate.rateLimited(year, await send(gate));
    await clock.advanceTo(10);
    expect(await gate.wait()).toEqual({ kind: "turned_away", heldUntil: 120_000, askedUntil: year });
  });

  it("asks the cloud again once the capped pause is over", async () => {
    const { gate, clock } = gateAt(0, 120_000);
    gate.rateLimited(365 * 24 * 3600 * 1000, await send(gate));
    await clock.advanceTo(120_000);
    expect(await gate.wait()).toEqual({ kind: "send", sentAt: 120_000 });
  });

  it("turns away a caller whose deadline comes before the pause ends, and holds one whose does not", async () => {
    const { gate, clock } = gateAt(0, 120_000);
    gate.rateLimited(5000, await send(gate));
    expect(await gate.wait({ deadline: 1000 })).toEqual({
      kind: "turned_away",
      heldUntil: 5000,
      askedUntil: 5000,
    });
    const patient = waiting(gate, 6000);
    await clock.advanceTo(6000);
    expect(patient.pass).toEqual({ kind: "send", sentAt: 5000 });
  });

  it("turns away a caller whose turn, paced behind others, comes after its deadline", async () => {
    const { gate, clock } = gateAt();
    const burst = await Promise.all(Array.from({ length: 12 }, () => send(gate)));
    for (const sentAt of burst.slice(10)) gate.rateLimited(1000, sentAt);
    await clock.advanceTo(1000);
    await send(gate);
    const pass = await gate.wait({ deadline: 1050 });
    expect(pass).toEqual({ kind: "turned_away", heldUntil: 1105 });
  });

  it("never sleeps longer than its longest pause, nor beyond what a timer can hold", async () => {
    const { gate, clock } = gateAt(0, 120_000);
    gate.rateLimited(Number.MAX_SAFE_INTEGER, await send(gate));
    await clock.advanceTo(120_000);
    gate.rateLimited(60_000, await send(gate));
    const held = waiting(gate);
    await clock.advanceTo(200_000);
    expect(held.pass).toEqual({ kind: "send", sentAt: 180_000 });
    expect(Math.max(...clock.requested)).toBeLessThanOrEqual(120_000);
    expect(Math.max(...clock.requested)).toBeLessThanOrEqual(MAX_TIMER_MS);
  });
});
