import {
  backoffDelay,
  decide,
  isOutcomeUnknown,
  MAX_RATE_LIMIT_RETRIES,
  parseRetryAfter,
  spend,
  type CallSafety,
  type Failure,
} from "pulumi-gpucloud/sdk";

const ALL: CallSafety[] = ["read", "idempotent", "keyed", "unsafe"];
const settings = { baseDelayMs: 100, maxDelayMs: 1000 };
const one = (): number => 0.999999;

describe("retry policy table", () => {
  it.each(ALL)("retries a %s call that never reached the server", (safety) => {
    expect(decide(safety, { kind: "not_sent" }, { ordinary: 0, rateLimited: 0 }, 3, settings).action).toBe(
      "retry",
    );
  });

  it.each(ALL)("retries a %s call refused with 429 or 503", (safety) => {
    expect(
      decide(safety, { kind: "status", status: 429 }, { ordinary: 0, rateLimited: 0 }, 3, settings).action,
    ).toBe("retry");
    expect(
      decide(safety, { kind: "status", status: 503 }, { ordinary: 0, rateLimited: 0 }, 3, settings).action,
    ).toBe("retry");
  });

  it.each(["read", "idempotent", "keyed"] as CallSafety[])(
    "retries a %s call whose answer was lost or was a 500",
    (safety) => {
      for (const failure of [
        { kind: "lost" },
        { kind: "timeout" },
        { kind: "status", status: 500 },
        { kind: "status", status: 502 },
      ] as Failure[]) {
        expect(decide(safety, failure, { ordinary: 0, rateLimited: 0 }, 3, settings).action).toBe("retry");
      }
    },
  );

  it.each(["read", "idempotent", "keyed"] as CallSafety[])(
    "retries a %s call answered with a 2xx it cannot read, within the ordinary budget",
    (safety) => {
      const unreadable: Failure = { kind: "unreadable" };
      expect(decide(safety, unreadable, { ordinary: 2, rateLimited: 0 }, 3, settings).action).toBe("retry");
      expect(decide(safety, unreadable, { ordinary: 3, rateLimited: 0 }, 3, settings).action).toBe("fail");
      expect(spend({ ordinary: 0, rateLimited: 0 }, unreadable)).toEqual({ ordinary: 1, rateLimited: 0 });
    },
  );

  it("turns an unreadable answer to an unsafe call into outcome unknown: the call may have been carried out", () => {
    expect(decide("unsafe", { kind: "unreadable" }, { ordinary: 0, rateLimited: 0 }, 3, settings)).toEqual({
      action: "outcome_unknown",
    });
    expect(isOutcomeUnknown("unsafe", { kind: "unreadable" })).toBe(true);
  });

  it("turns a lost answer, a timeout or an ambiguous 5xx on an unsafe call into outcome unknown", () => {
    for (const failure of [
      { kind: "lost" },
      { kind: "timeout" },
      { kind: "status", status: 500 },
      { kind: "status", status: 504 },
    ] as Failure[]) {
      expect(decide("unsafe", failure, { ordinary: 0, rateLimited: 0 }, 3, settings)).toEqual({
        action: "outcome_unknown",
      });
      expect(isOutcomeUnknown("unsafe", failure)).toBe(true);
    }
    expect(isOutcomeUnknown("unsafe", { kind: "status", status: 503 })).toBe(false);
    expect(isOutcomeUnknown("read", { kind: "lost" })).toBe(false);
  });

  it.each([400, 401, 403, 404, 405, 413, 200])("never retries HTTP %i", (status) => {
    for (const safety of ALL)
      expect(
        decide(safety, { kind: "status", status }, { ordinary: 0, rateLimited: 0 }, 3, settings),
      ).toEqual({ action: "fail" });
  });

  it("stops once the retries are spent", () => {
    expect(decide("read", { kind: "lost" }, { ordinary: 2, rateLimited: 0 }, 3, settings).action).toBe(
      "retry",
    );
    expect(decide("read", { kind: "lost" }, { ordinary: 3, rateLimited: 0 }, 3, settings)).toEqual({
      action: "fail",
    });
    expect(decide("unsafe", { kind: "not_sent" }, { ordinary: 0, rateLimited: 0 }, 0, settings)).toEqual({
      action: "fail",
    });
  });

  it("waits out 429s on their own budget, so a rate limit does not use up the other retries", () => {
    const refused: Failure = { kind: "status", status: 429, retryAfterMs: 1000 };
    const spentOnOthers = { ordinary: 3, rateLimited: 0 };
    expect(decide("idempotent", refused, spentOnOthers, 3, settings).action).toBe("retry");
    let spent = { ordinary: 0, rateLimited: 0 };
    for (let i = 0; i < MAX_RATE_LIMIT_RETRIES; i++) spent = spend(spent, refused);
    expect(spent).toEqual({ ordinary: 0, rateLimited: MAX_RATE_LIMIT_RETRIES });
    expect(decide("idempotent", refused, spent, 3, settings)).toEqual({ action: "fail" });
    expect(decide("idempotent", { kind: "lost" }, spent, 3, settings).action).toBe("retry");
    expect(spend(spent, { kind: "lost" })).toEqual({ ordinary: 1, rateLimited: MAX_RATE_LIMIT_RETRIES });
  });

  it("resends nothing, not even after a 429, when maxRetries is 0", () => {
    const refused: Failure = { kind: "status", status: 429, retryAfterMs: 1000 };
    expect(decide("read", refused, { ordinary: 0, rateLimited: 0 }, 0, settings)).toEqual({ action: "fail" });
  });
});

describe("backoff", () => {
  it("grows exponentially and is capped", () => {
    expect(backoffDelay(0, undefined, settings, one)).toBe(99);
    expect(backoffDelay(1, undefined, settings, one)).toBe(199);
    expect(backoffDelay(3, undefined, settings, one)).toBe(799);
    expect(backoffDelay(10, undefined, settings, one)).toBe(999);
  });

  it("uses full jitter between zero and the ceiling", () => {
    expect(backoffDelay(2, undefined, settings, () => 0)).toBe(0);
    expect(backoffDelay(2, undefined, settings, () => 0.5)).toBe(200);
  });

  it("never waits less than Retry-After, even beyond the cap", () => {
    expect(backoffDelay(0, 1000, settings, () => 0)).toBe(1000);
    expect(backoffDelay(0, 5000, settings, one)).toBe(5000);
    expect(
      decide(
        "unsafe",
        { kind: "status", status: 429, retryAfterMs: 2000 },
        { ordinary: 0, rateLimited: 0 },
        3,
        settings,
        () => 0,
      ),
    ).toEqual({
      action: "retry",
      delayMs: 2000,
    });
  });
});

describe("Retry-After parsing", () => {
  it("reads delta seconds", () => {
    expect(parseRetryAfter("1", 0)).toBe(1000);
    expect(parseRetryAfter(" 7 ", 0)).toBe(7000);
    expect(parseRetryAfter(["3"], 0)).toBe(3000);
  });

  it("reads an HTTP date relative to now", () => {
    const now = Date.parse("2025-08-01T00:00:00Z");
    expect(parseRetryAfter("Fri, 01 Aug 2025 00:00:05 GMT", now)).toBe(5000);
    expect(parseRetryAfter("Thu, 31 Jul 2025 00:00:00 GMT", now)).toBe(0);
  });

  it("ignores what it cannot read", () => {
    expect(parseRetryAfter(undefined, 0)).toBeUndefined();
    expect(parseRetryAfter("soon", 0)).toBeUndefined();
  });
});
