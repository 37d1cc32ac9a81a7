import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError, altError, paramError, systemError } from "./errors";

/** The success envelope (CONTRACTS.md): `{code: 0, msg: "success", data?}`. */
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

/**
 * How API failures are answered: `http` (the default) with their HTTP status, as the API documents;
 * `envelope` as public clients expect of the live service, business failures with HTTP 200 and the
 * envelope code (`--error-status envelope`).
 */
export type ErrorStatusMode = "http" | "envelope";

export const ERROR_STATUS_MODES: readonly ErrorStatusMode[] = ["http", "envelope"];

/** The mode an option asks for (default http); anything else is refused, naming the allowed values. */
export function errorStatusMode(value: unknown, option = "errorStatus"): ErrorStatusMode {
  if (value === undefined) return "http";
  const mode = ERROR_STATUS_MODES.find((m) => m === value);
  if (mode === undefined) {
    throw new Error(
      `${option}: must be one of ${ERROR_STATUS_MODES.join(", ")}, got ${JSON.stringify(value)}`,
    );
  }
  return mode;
}

/**
 * A business failure: the request reached the API and a rule refused it (a parameter, a missing
 * resource, a wrong state, the balance). What stays an HTTP status in envelope mode: 401 and 403 (the
 * key), 5xx (the service's own failure), and every alt-shape answer, which reports the transport rather
 * than the business: an unknown path (404), a wrong method (405), a body too large (413), a rate limit
 * (429 with Retry-After), unavailability (503).
 */
function isBusinessFailure(error: ApiError): boolean {
  return (
    error.alt === undefined &&
    error.status >= 400 &&
    error.status < 500 &&
    error.status !== 401 &&
    error.status !== 403
  );
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
 * (CONTRACTS.md). Route patterns are collected as they are added so parametric paths match too.
 */
export function installErrorHandling(
  app: FastifyInstance,
  bodyLimit: number,
  options: ErrorHandlingOptions = { mode: "http", apiBase: "" },
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
    const asEnvelope =
      options.mode === "envelope" &&
      request.url.startsWith(`${options.apiBase}/`) &&
      isBusinessFailure(apiError);
    return sendError(reply, apiError, asEnvelope ? 200 : apiError.status);
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
