import {
  ANSWER_MEANINGS,
  AuthenticationError,
  BusinessError,
  EngineRejectionError,
  errorFromFailure,
  errorFromResponse,
  GpuCloudError,
  EndpointNotFoundError,
  NotFoundError,
  outcomeUnknown,
  PermissionDeniedError,
  RateLimitError,
  ServerError,
  TimeoutError,
  UnreadableAnswerError,
  ConnectionError,
  isTransientError,
  OutcomeUnknownError,
  readAnswer,
  type WaitLimit,
} from "pulumi-gpucloud/sdk";

const ctx = { action: "create instance from pod pod_1", method: "POST", path: "/instance/create_by_pod" };

describe("errors built from an HTTP status and a body", () => {
  it("explains a parameter refusal with what failed, why and what to do", () => {
    const err = errorFromResponse({
      ...ctx,
      status: 400,
      body: { code: 1, msg: "gpu_nums: must be one of 1, 2, 4, 8" },
    });
    expect(err).toBeInstanceOf(BusinessError);
    expect(err).toBeInstanceOf(GpuCloudError);
    expect(err.message).toBe(
      "Could not create instance from pod pod_1: the API refused it: gpu_nums: must be one of 1, 2, 4, 8 (HTTP 400, code 1). Fix the request or the resource's state and try again.",
    );
    expect(err).toMatchObject({
      status: 400,
      code: 1,
      apiMessage: "gpu_nums: must be one of 1, 2, 4, 8",
      method: "POST",
      path: "/instance/create_by_pod",
    });
  });

  it("maps 401 and envelope code 2 to AuthenticationError", () => {
    expect(
      errorFromResponse({
        ...ctx,
        status: 401,
        body: { code: 2, msg: "authentication failed: unknown key" },
      }),
    ).toBeInstanceOf(AuthenticationError);
    expect(
      errorFromResponse({ ...ctx, status: 200, body: { code: 2, msg: "not logged in" } }),
    ).toBeInstanceOf(AuthenticationError);
  });

  it("maps 403 to PermissionDeniedError", () => {
    expect(
      errorFromResponse({
        ...ctx,
        status: 403,
        body: { code: 403, message: "forbidden", data: { error: "forbidden" } },
      }),
    ).toBeInstanceOf(PermissionDeniedError);
  });

  it("maps the API's missing-resource answers, and only those, to NotFoundError", () => {
    const missing = [
      { status: 404, body: { code: -1, msg: "instance not found" } },
      { status: 404, body: { code: 1, msg: "instance not found: i-1" } },
      { status: 200, body: { code: -1, msg: "image does not exist" } },
      { status: 200, body: { code: "-1", msg: "实例不存在" } },
    ];
    for (const answer of missing)
      expect(errorFromResponse({ ...ctx, ...answer })).toBeInstanceOf(NotFoundError);
    for (const msg of ["query failed", "token expired", "instance is being destroyed"]) {
      expect(errorFromResponse({ ...ctx, status: 200, body: { code: -1, msg } })).toBeInstanceOf(
        BusinessError,
      );
    }
  });

  it("maps the API's unknown-path answer to EndpointNotFoundError, not NotFoundError, naming the URL and the fix", () => {
    const url = "http://127.0.0.1:8787/api/open/api/open/v2/instance/info";
    const alt = errorFromResponse({
      ...ctx,
      url,
      status: 404,
      body: {
        code: 404,
        msg: "not found",
        message: "not found",
        data: { error: "not_found", details: "no route /nope" },
      },
    });
    expect(alt).toBeInstanceOf(EndpointNotFoundError);
    expect(alt).not.toBeInstanceOf(NotFoundError);
    expect(alt).toMatchObject({ url, status: 404, code: 404 });
    expect(alt.message).toContain(`${url} is not an endpoint of API v2`);
    expect(alt.message).toContain("not found: no route /nope");
    expect(alt.message).toContain("it must be the service root");
    expect(alt.message).toContain("/api/open/v2, which the client appends itself");
  });

  it("keeps Retry-After on a RateLimitError", () => {
    const err = errorFromResponse({
      ...ctx,
      status: 429,
      retryAfterMs: 2000,
      body: { code: 429, message: "slow down", data: { error: "rate_limited" } },
    });
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).retryAfterMs).toBe(2000);
    expect(err.message).toContain("try again after 2 s");
    expect(err.message).toMatch(/asked to wait 2 s \(until \d{4}-\d\d-\d\dT/);
    expect(err.apiMessage).toBe("slow down");
  });

  it("maps 5xx and code -2 to ServerError", () => {
    expect(
      errorFromResponse({ ...ctx, status: 500, body: { code: -2, msg: "system error" } }),
    ).toBeInstanceOf(ServerError);
    expect(
      errorFromResponse({ ...ctx, status: 503, body: { code: 503, message: "unavailable" } }),
    ).toBeInstanceOf(ServerError);
    expect(
      errorFromResponse({ ...ctx, status: 200, body: { code: -2, msg: "system error" } }),
    ).toBeInstanceOf(ServerError);
  });

  it("reads a workflow engine rejection from data.error", () => {
    const err = errorFromResponse({
      ...ctx,
      status: 400,
      body: {
        code: 1,
        msg: "invalid input",
        data: {
          error: {
            reason: "invalid input",
            detail: "steps is not declared",
            engine_code: "INVALID_WORKFLOW_INPUT",
            status_code: 422,
          },
        },
      },
    });
    expect(err).toBeInstanceOf(EngineRejectionError);
    expect(err).toMatchObject({
      engineCode: "INVALID_WORKFLOW_INPUT",
      detail: "steps is not declared",
      engineStatusCode: 422,
      code: 1,
    });
    expect(err.message).toContain("INVALID_WORKFLOW_INPUT");
  });

  it("names the field of an alt-shape body", () => {
    const err = errorFromResponse({
      ...ctx,
      status: 413,
      body: {
        code: 413,
        msg: "too large",
        message: "too large",
        data: { error: "too_large", field: "file" },
      },
    });
    expect(err).toBeInstanceOf(BusinessError);
    expect(err.message).toContain("(field file)");
  });

  it("survives a body that is not JSON", () => {
    const err = errorFromResponse({ ...ctx, status: 502, body: undefined });
    expect(err).toBeInstanceOf(ServerError);
    expect(err.message).toContain("no message");
  });

  it("never repeats the API key, even when the service echoes it", () => {
    const secret = "sk-live-SECRET-123";
    const err = errorFromResponse({
      ...ctx,
      status: 401,
      body: { code: 2, msg: `authentication failed: key ${secret} is disabled` },
      secret,
    });
    expect(err.message).not.toContain(secret);
    expect(
      errorFromFailure({ ...ctx, kind: "lost", detail: `socket ${secret}`, secret }).message,
    ).not.toContain(secret);
  });
});

describe("errors without an answer", () => {
  it("builds ConnectionError and TimeoutError", () => {
    expect(errorFromFailure({ ...ctx, kind: "not_sent", detail: "ECONNREFUSED" })).toBeInstanceOf(
      ConnectionError,
    );
    const timeout = errorFromFailure({ ...ctx, kind: "timeout", detail: "timeout", timeoutMs: 50 });
    expect(timeout).toBeInstanceOf(TimeoutError);
    expect(timeout.message).toContain("no answer within 50 ms");
  });

  it("builds OutcomeUnknownError telling the caller to reconcile", () => {
    const err = outcomeUnknown({
      ...ctx,
      reason: "the connection was dropped",
      reconcile: "List your instances.",
    });
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect(err.message).toMatch(/may or may not have been carried out.*not retried.*List your instances\./);
  });
});

describe("the envelope variants clients of the live service meet", () => {
  it("reads a code sent as a string like the number", () => {
    const err = errorFromResponse({ ...ctx, status: 400, body: { code: "1", msg: "gpu_nums: bad" } });
    expect(err).toBeInstanceOf(BusinessError);
    expect(err.code).toBe(1);
    expect(
      errorFromResponse({ ...ctx, status: 200, body: { code: "2", msg: "not logged in" } }),
    ).toBeInstanceOf(AuthenticationError);
    expect(
      errorFromResponse({ ...ctx, status: 200, body: { code: "-2", msg: "system error" } }),
    ).toBeInstanceOf(ServerError);
  });

  it("treats a business failure answered with HTTP 200 and a non-zero code like its 4xx twin", () => {
    const asHttp = errorFromResponse({ ...ctx, status: 400, body: { code: 1, msg: "insufficient balance" } });
    const asEnvelope = errorFromResponse({
      ...ctx,
      status: 200,
      body: { code: 1, msg: "insufficient balance" },
    });
    expect(asEnvelope).toBeInstanceOf(BusinessError);
    expect(asEnvelope.message).toBe(asHttp.message.replace("HTTP 400", "HTTP 200"));
  });

  it('reads {"error": "..."} and {"error": {"message": ...}} bodies', () => {
    const flat = errorFromResponse({ ...ctx, status: 400, body: { error: "title too long" } });
    expect(flat).toBeInstanceOf(BusinessError);
    expect(flat.apiMessage).toBe("title too long");
    expect(flat.message).toContain("the API refused it: title too long (HTTP 400)");
    const nested = errorFromResponse({ ...ctx, status: 503, body: { error: { message: "overloaded" } } });
    expect(nested).toBeInstanceOf(ServerError);
    expect(nested.apiMessage).toBe("overloaded");
    expect(
      errorFromResponse({ ...ctx, status: 401, body: { error: { message: "bad key" } } }),
    ).toBeInstanceOf(AuthenticationError);
  });
});

describe("a 404 that is not the API's answer", () => {
  const url = "https://proxy.example/api/open/api/open/v2/instance/create_by_pod";
  it.each([
    [
      "an HTML page",
      undefined,
      "<html><head><title>404 Not Found</title></head></html>",
      'an HTML page ("404 Not Found")',
    ],
    ["text", undefined, "404 page not found", 'text ("404 page not found")'],
    ["an empty body", undefined, "", "an empty body"],
    ["JSON without code", { error: "not found" }, undefined, "JSON without the API's code and msg"],
    ["JSON with nothing known", { path: "/x" }, undefined, "JSON without the API's code and msg"],
  ])("with %s is EndpointNotFoundError naming the URL", (_name, body, text, shown) => {
    const err = errorFromResponse({ ...ctx, url, status: 404, body, text });
    expect(err).toBeInstanceOf(EndpointNotFoundError);
    expect(err).not.toBeInstanceOf(NotFoundError);
    expect(err.message).toContain(`${url} answered with ${shown}`);
    expect(err.message).toContain("This says nothing about whether the resource exists");
  });

  it("an HTML page with HTTP 200 is an UnreadableAnswerError naming the URL, not a success", () => {
    const err = errorFromResponse({ ...ctx, url, status: 200, body: undefined, text: "<html>portal</html>" });
    expect(err.constructor).toBe(UnreadableAnswerError);
    expect(err.message).toMatch(/answered with an HTML page, not the \{code, msg, data\} envelope.*baseUrl/);
  });

  it("an HTML page with a redirect is a GpuCloudError of its own: a refusal by what stands between", () => {
    const err = errorFromResponse({
      ...ctx,
      url,
      status: 302,
      body: undefined,
      text: "<html>sign in</html>",
    });
    expect(err.constructor).toBe(GpuCloudError);
  });
});

describe("how long the cloud asked to wait", () => {
  const at = Date.parse("2026-01-01T00:00:00Z");
  const asked = (retryAfterMs: number, waitLimit?: WaitLimit) =>
    errorFromResponse({
      ...ctx,
      status: 429,
      body: { code: 429, message: "too many requests" },
      retryAfterMs,
      receivedAt: at,
      waitLimit,
    }) as RateLimitError;

  it("says it in seconds, minutes, hours, days or years, and until when", () => {
    expect(asked(45_000).message).toContain("asked to wait 45 s (until 2026-01-01T00:00:45.000Z)");
    expect(asked(3_600_000).message).toContain("asked to wait 60 min (until 2026-01-01T01:00:00.000Z)");
    expect(asked(6 * 3_600_000).message).toContain("asked to wait 6 h (until 2026-01-01T06:00:00.000Z)");
    expect(asked(10 * 86_400_000).message).toContain("asked to wait 10 days");
    expect(asked(5e12).message).toContain("asked to wait 158 years");
    expect(asked(1e300).message).toContain("asked to wait more than 10000 years: ");
    expect(asked(Infinity).message).toContain("asked to wait an unbounded time: ");
  });

  it("marks a wait longer than the call may take, and says what limited it", () => {
    const capped = asked(3_600_000, { ms: 120_000, by: "maxRateLimitWaitMs" });
    expect(capped.tooLongToWait).toBe(true);
    expect(isTransientError(capped)).toBe(false);
    expect(capped.message).toContain(
      "That is longer than this call may wait (2 min, maxRateLimitWaitMs), so it was not retried. Try again after that time, or raise maxRateLimitWaitMs.",
    );
    const byDeadline = asked(30_000, { ms: 5_000, by: "deadline" });
    expect(byDeadline.message).toContain("longer than this call may wait (5 s, its deadline)");
    expect(isTransientError(asked(1000))).toBe(true);
  });
});

describe("the answer table", () => {
  // One answer per row, in the table's order: each must be decided by its own row, so no row is shadowed.
  const oneAnswerPerRow = [
    { status: 400, body: { code: 1, msg: "x", data: { error: { reason: "bad", engine_code: "E" } } } },
    { status: 401, body: { code: 2, msg: "x" } },
    { status: 403, body: { code: 403, message: "x" } },
    { status: 429, body: { code: 429, message: "x" } },
    { status: 404, body: { code: 404, message: "x" } },
    { status: 404, body: undefined, text: "<html></html>" },
    { status: 404, body: { code: -1, msg: "instance not found" } },
    { status: 502, body: undefined, text: "<html>bad gateway</html>" },
    { status: 200, body: { hello: "world" } },
    { status: 302, body: undefined, text: "<html>moved</html>" },
    { status: 200, body: { code: 1, msg: "title too long" } },
  ];

  it("has one row for each kind of answer, each reached by its own example", () => {
    expect(ANSWER_MEANINGS).toHaveLength(oneAnswerPerRow.length);
    oneAnswerPerRow.forEach((answer, row) => {
      const read = readAnswer(answer);
      expect([row, ANSWER_MEANINGS.findIndex((m) => m.matches(read))]).toEqual([row, row]);
      expect(errorFromResponse({ ...ctx, ...answer })).toBeInstanceOf(ANSWER_MEANINGS[row].error);
    });
  });

  it("describes every row in words", () => {
    for (const meaning of ANSWER_MEANINGS) expect(meaning.when.length).toBeGreaterThan(5);
  });
});
