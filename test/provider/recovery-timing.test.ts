/**
 * The timing model of lost-create recovery (provider/resources/instance/lost-create/timing.ts): the floor
 * on T for a cloud across a network, none for one on this machine, the bounds of an account no one else
 * deploys with, and T following the slowest commit the cloud has shown.
 */
import { timingModel } from "../../provider/resources/instance/lost-create";

const { adoptionMs, isLoopback, modelRequestMs, recoveryTiming, REMOTE_FLOOR_MS } = timingModel;

const remote = "https://gpu.example.com";
const local = "http://127.0.0.1:8787";

describe("the recovery's timing model", () => {
  it("never takes a request timeout below the floor for a cloud across a network", () => {
    expect(modelRequestMs({ requestTimeoutMs: 100, baseUrl: remote })).toBe(REMOTE_FLOOR_MS);
    expect(modelRequestMs({ requestTimeoutMs: 30_000, baseUrl: remote })).toBe(30_000);
    expect(recoveryTiming({ requestTimeoutMs: 100, pollIntervalMs: 10, baseUrl: remote })).toMatchObject({
      requestMs: 3000,
      settledAfterSendMs: 9000,
      graceMs: 18_000,
    });
  });

  it("takes a T whose late-commit bound covers a create a gateway held 7 s, whatever shorter timeout is set", () => {
    const timing = recoveryTiming({ requestTimeoutMs: 2000, pollIntervalMs: 10, baseUrl: remote });
    expect(timing.settledAfterSendMs).toBeGreaterThanOrEqual(7000);
  });

  it("takes the request timeout as given for a cloud on this machine", () => {
    for (const url of [
      local,
      "http://127.8.0.1:1",
      "http://localhost:8787",
      "http://localhost.:8787",
      "http://[::1]:8787",
    ]) {
      expect(isLoopback(url)).toBe(true);
      expect(modelRequestMs({ requestTimeoutMs: 100, baseUrl: url })).toBe(100);
    }
    for (const url of [
      remote,
      "http://127.0.0.1.example.com",
      "http://localhost.example.com",
      "http://10.0.0.1",
    ])
      expect(isLoopback(url)).toBe(false);
  });

  it("waits no grace and no rival claims when no one else deploys with the account", () => {
    const shared = recoveryTiming({ requestTimeoutMs: 30_000, pollIntervalMs: 5000, baseUrl: remote });
    const alone = recoveryTiming({
      requestTimeoutMs: 30_000,
      pollIntervalMs: 5000,
      baseUrl: remote,
      sharedAccount: false,
    });
    expect(shared).toMatchObject({ graceMs: 180_000, rivalsLandedMs: 150_000, settledAfterSendMs: 90_000 });
    expect(alone).toMatchObject({ graceMs: 0, rivalsLandedMs: 0, settledAfterSendMs: 90_000 });
    expect(adoptionMs(alone)).toBeLessThan(adoptionMs(shared));
  });

  it("takes T at least half the slowest commit the cloud has shown, so three T cover it half again", () => {
    const settings = { requestTimeoutMs: 500, pollIntervalMs: 10, baseUrl: local };
    expect(recoveryTiming(settings, 4000)).toMatchObject({ requestMs: 2000, settledAfterSendMs: 6000 });
    expect(recoveryTiming(settings, 600).requestMs).toBe(500);
  });
});
