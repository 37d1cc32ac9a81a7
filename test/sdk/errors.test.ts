import {
  AuthenticationError,
  BusinessError,
  EngineRejectionError,
  errorFromFailure,
  errorFromResponse,
  GpuCloudError,
  NotFoundError,
  outcomeUnknown,
  PermissionDeniedError,
  RateLimitError,
  ServerError,
  TimeoutError,
  ConnectionError,
  OutcomeUnknownError,
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

  it("maps 404 in either body shape, and a code -1 'not found' on HTTP 200, to NotFoundError", () => {
    const envelope = errorFromResponse({
      ...ctx,
      status: 404,
      body: { code: -1, msg: "instance not found" },
    });
    const alt = errorFromResponse({
      ...ctx,
      status: 404,
      body: {
        code: 404,
        msg: "not found",
        message: "not found",
        data: { error: "not_found", details: "no route /nope" },
      },
    });
    expect(envelope).toBeInstanceOf(NotFoundError);
    expect(alt).toBeInstanceOf(NotFoundError);
    expect(alt.message).toContain("the API has no such endpoint: not found: no route /nope");
    expect(alt.message).toContain("Check that baseUrl is the service root");
    expect(
      errorFromResponse({ ...ctx, status: 200, body: { code: -1, msg: "image does not exist" } }),
    ).toBeInstanceOf(NotFoundError);
    expect(
      errorFromResponse({ ...ctx, status: 200, body: { code: -1, msg: "query failed" } }),
    ).toBeInstanceOf(BusinessError);
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
