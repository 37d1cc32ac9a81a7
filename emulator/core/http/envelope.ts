/**
 * In core's HTTP room, how every answer is made: the success envelope, any failure turned into one ApiError,
 * and the HTTP status of each class of failure in envelope and http modes.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError, altError, paramError, systemError } from "./errors";
import type { ErrorStatusMode } from "../emulator-options";

export type { ErrorStatusMode } from "../emulator-options";

/** The success envelope (docs/design/contracts.md#http-conventions): `{code: 0, msg: "success", data?}`. */
export function ok(data?: unknown): { code: 0; msg: "success"; data?: unknown } {
  return data === undefined ? { code: 0, msg: "success" } : { code: 0, msg: "success", data };
}

/** Every failure, ours or fastify's, becomes one ApiError here, so answers never leak a stack trace. */
export function toApiError(error: unknown, bodyLimit: number): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as Partial<FastifyError>;
  switch (fastifyError.code) {
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return paramError("body", "is not valid JSON");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return paramError("body", "is empty but Content-Type says application/json; send a JSON object");
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return paramError("body", "must be JSON with 'Content-Type: application/json'");
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return altError(413, "payload_too_large", `request body too large: at most ${bodyLimit} bytes`);
  }
  // Plugins (e.g. multipart) throw their own 4xx errors; their messages name the limit or the part.
  if (fastifyError.statusCode === 413) {
    return altError(
      413,
      "payload_too_large",
      `request body too large: ${fastifyError.message ?? "over the limit"}`,
    );
  }
  // A parser's own message may quote the body, so it is not passed on.
  if (error instanceof SyntaxError) return paramError("body", "could not be parsed");
  if (
    fastifyError.statusCode !== undefined &&
    fastifyError.statusCode >= 400 &&
    fastifyError.statusCode < 500
  ) {
    return paramError("body", `could not be parsed: ${fastifyError.message ?? "malformed request"}`);
  }
  return systemError();
}

export const ERROR_STATUS_MODES: readonly ErrorStatusMode[] = ["envelope", "http"];

/** The mode an option asks for (default envelope); anything else is refused, naming the allowed values. */
export function errorStatusMode(value: unknown, option = "errorStatus"): ErrorStatusMode {
  if (value === undefined) return "envelope";
  const mode = ERROR_STATUS_MODES.find((m) => m === value);
  if (mode === undefined) {
    throw new Error(
      `${option}: must be one of ${ERROR_STATUS_MODES.join(", ")}, got ${JSON.stringify(value)}`,
    );
  }
  return mode;
}

interface FailureClass {
  failure: string;
  matches: (error: ApiError) => boolean;
  /** The HTTP status in envelope mode: 200 with the envelope's code, or the failure's own status. */
  inEnvelopeMode: "200" | "own status";
}

/**
 * The HTTP status of each class of API failure in envelope mode, first match wins (http mode answers
 * every failure with its own status). The live service answers a business failure with HTTP 200 and
 * the envelope's non-zero code, and its public clients read it so; what its status table gives a
 * status of its own keeps it: the key (401), permission (403), the rate limit (429 with Retry-After)
 * and the service's own failure (5xx), as does every answer about the transport rather than the request.
 */
const FAILURE_STATUS: readonly FailureClass[] = [
  {
    failure:
      "an answer about the transport, in the alternative shape: an unknown path (404), a wrong method (405), " +
      "a body too large (413), the rate limit (429 with Retry-After), unavailability (503), a Host refused (421)",
    matches: (error) => error.alt !== undefined,
    inEnvelopeMode: "own status",
  },
  {
    failure: "the key: not logged in or not accepted (401, code 2)",
    matches: (e) => e.status === 401,
    inEnvelopeMode: "own status",
  },
  {
    failure: "insufficient permission (403)",
    matches: (e) => e.status === 403,
    inEnvelopeMode: "own status",
  },
  {
    failure: "the service's own failure (5xx, code -2)",
    matches: (e) => e.status >= 500,
    inEnvelopeMode: "own status",
  },
  {
    failure:
      "a business failure: a parameter refused, a resource missing or another user's, a wrong state, " +
      "the balance (400 or 404, code 1 or -1)",
    matches: () => true,
    inEnvelopeMode: "200",
  },
];

/** The HTTP status an API failure answers with in `mode`. */
export function apiFailureStatus(error: ApiError, mode: ErrorStatusMode): number {
  if (mode === "http") return error.status;
  const failureClass = FAILURE_STATUS.find((row) => row.matches(error)) as FailureClass;
  return failureClass.inEnvelopeMode === "200" ? 200 : error.status;
}

export function sendError(reply: FastifyReply, error: ApiError, status = error.status): FastifyReply {
  return reply.code(status).headers(error.headers).send(error.body());
}

export interface ErrorHandlingOptions {
  mode: ErrorStatusMode;
  /** Only API answers follow the mode; the admin API keeps its HTTP statuses. */
  apiBase: string;
}

/**
 * Unknown paths answer 404 and known paths with another method 405, both in the alternative shape
 * (docs/design/contracts.md#http-conventions). Route patterns are collected as they are added so parametric
 * paths match too.
 */
export function installErrorHandling(
  app: FastifyInstance,
  bodyLimit: number,
  options: ErrorHandlingOptions = { mode: "envelope", apiBase: "" },
): void {
  const patterns: { method: string; regex: RegExp }[] = [];
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const regex = new RegExp(
      `^${route.url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[^/]+/g, "[^/]+")}/?$`,
    );
    for (const method of methods) patterns.push({ method: method.toUpperCase(), regex });
  });
  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error, bodyLimit);
    const isApiCall = request.url.startsWith(`${options.apiBase}/`);
    return sendError(reply, apiError, isApiCall ? apiFailureStatus(apiError, options.mode) : apiError.status);
  });
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split("?")[0];
    const allowed = patterns.filter((p) => p.regex.test(path)).map((p) => p.method);
    if (allowed.length > 0) {
      const unique = [...new Set(allowed.filter((m) => m !== "HEAD"))];
      return sendError(
        reply,
        altError(
          405,
          "method_not_allowed",
          `method ${request.method} is not allowed on ${path}; use ${unique.join(" or ")}`,
          {
            allow: unique.join(", "),
          },
        ),
      );
    }
    return sendError(reply, altError(404, "not_found", `no such endpoint: ${request.method} ${path}`));
  });
}
