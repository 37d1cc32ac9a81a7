import { runBench, type BenchResults } from "../../bench/run";
import { SMOKE_PACE } from "../../bench/cloud";
import { SCENARIOS } from "../../bench/scenarios";
import { DOORS, ENGINE_OPERATIONS } from "../../bench/engine";

/** The CI variant of `npm run bench --smoke`: it guards behaviour (calls, exactness), never timings. */
describe("npm run bench, smoke variant (N=10, with and without --rate-limit 10; the engine's path at N=2)", () => {
  let results: BenchResults;
  beforeAll(async () => {
    results = await runBench({
      n: [10],
      rateLimits: [0, 10],
      scenarios: SCENARIOS,
      pace: SMOKE_PACE,
      full: false,
      throughputSeconds: 0.2,
      parallelCreateN: 2,
      engineN: [2],
      doors: DOORS,
      fleetN: [2],
      fleetRounds: 1,
    });
  }, 240_000); // a loaded machine (the whole npm test at once) takes several times its 30 s alone

  it("writes one record per scenario, rate limit and subject, none failed", () => {
    expect(results.records).toHaveLength(SCENARIOS.length * 2 * 2);
    for (const record of results.records) {
      expect(record).toEqual(
        expect.objectContaining({
          scenario: expect.any(String),
          n: 10,
          rateLimit: expect.any(Number),
          subject: expect.stringMatching(/^(gpucloud|baseline)$/),
          apiCalls: expect.any(Number),
          http429: expect.any(Number),
          wallMs: expect.any(Number),
        }),
      );
      expect(record.error).toBeUndefined();
    }
  });

  it("refreshes 10 instances with one list walk where the baseline reads each, with or without a rate limit", () => {
    for (const rateLimit of [0, 10]) {
      const refresh = (subject: string) =>
        results.records.find(
          (r) => r.scenario === "refresh" && r.rateLimit === rateLimit && r.subject === subject,
        )!;
      // Besides the walk, the one check per provider process that baseUrl serves the API (GET /pod/list).
      expect(refresh("gpucloud").byEndpoint).toEqual({ "GET /instance/list": 1, "GET /pod/list": 1 });
      expect(refresh("baseline").byEndpoint["GET /instance/info"]).toBeGreaterThanOrEqual(10);
      expect(refresh("gpucloud").apiCalls).toBeLessThanOrEqual(refresh("baseline").apiCalls);
    }
  });

  it("runs the fleet program's lifecycle through both doors: each refresh one walk, peak memory read", () => {
    expect(results.engine.map((run) => run.door)).toEqual(DOORS);
    for (const run of results.engine) {
      expect(run.records.map((r) => [r.operation, r.error, r.n])).toEqual(
        ENGINE_OPERATIONS.map((operation) => [operation, undefined, 2]),
      );
      const calls = Object.fromEntries(run.records.map((r) => [r.operation, r.byEndpoint]));
      expect(calls.preview).toEqual({});
      expect(calls.refresh).toEqual({ "GET /instance/list": 1 });
      expect(calls["preview --refresh"]).toEqual({ "GET /instance/list": 1 });
      // Two instances created, titled and given a policy.
      expect(calls.up).toMatchObject({
        "POST /instance/create_by_pod": 2,
        "POST /instance/update_title": 2,
        "POST /instance/set_idle_close": 2,
      });
      expect(calls.destroy).toMatchObject({
        "POST /instance/destroy": 2,
        "POST /instance/set_idle_close": 2,
      });
      expect(run.providerPeakMemoryMb).toBeGreaterThan(0);
    }
  });

  it("compares a Fleet of 2 with the same fleet by hand through both doors: the same calls", () => {
    for (const door of DOORS) {
      const run = (declared: string) =>
        results.fleet.find((r) => r.door === door && r.declared === declared)!.records;
      const up = (declared: string) => run(declared).find((r) => r.operation === "up")!;
      // Every call but the list walks the waits share, whose number follows how long the waits last.
      const besidesWalks = (declared: string) =>
        Object.fromEntries(
          Object.entries(up(declared).byEndpoint).filter(([endpoint]) => endpoint !== "GET /instance/list"),
        );
      expect(run("Fleet").map((r) => [r.operation, r.error])).toEqual([
        ["preview", undefined],
        ["up", undefined],
        ["destroy", undefined],
      ]);
      expect(besidesWalks("Fleet")).toEqual(besidesWalks("by hand"));
    }
  });

  it("makes no API call for a preview with no change, and reports the summary figures", () => {
    for (const r of results.records.filter((x) => x.scenario === "preview")) expect(r.apiCalls).toBe(0);
    const stored = results.summary.serializedProvider;
    expect(stored.bytesPerResource).toBe(2 * stored.bytesPerCopy);
    expect(stored.bytesPerResource).toBeLessThanOrEqual(2500);
    expect(stored.linkedBytesPerCopy).toBeGreaterThan(stored.bytesPerCopy);
    expect(results.summary.checkMsFor1000Inputs).toBeGreaterThan(0);
    expect(results.summary.emulatorThroughput.infoPerSecond).toBeGreaterThan(0);
    // One round of 16 lanes: a create call of one second, then its 60 s boot at 60x: 2 s at best.
    expect(results.summary.parallelCreate).toEqual({
      n: 2,
      createLatencyMs: 1000,
      parallelism: 16,
      parallelMs: expect.any(Number),
      serialMs: expect.any(Number),
      floorMs: 2000,
    });
  });
});
