/**
 * Typed errors thrown by stores and core pieces. Each one knows its HTTP status and its envelope,
 * so a store never touches HTTP and `envelope.ts` turns any of them into an answer in one place
 * (docs/design/contracts.md#http-conventions).
 */

// docs/design/cloud-api.md#the-alternative-shape
/** The API's alternative error body: `code` equals the HTTP status. */
export interface AltShape {
  error: string;
  details: string;
  field?: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly data?: unknown,
    readonly alt?: AltShape,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }

  /** The JSON body this error answers with. */
  body(): Record<string, unknown> {
    if (this.alt) {
      return { code: this.code, msg: this.message, message: this.message, data: this.alt };
    }
    return this.data === undefined
      ? { code: this.code, msg: this.message }
      : { code: this.code, msg: this.message, data: this.data };
  }
}

/** 400 code 1: a request parameter is missing, of the wrong type or out of range. */
export function paramError(field: string, rule: string): ApiError {
  return new ApiError(400, 1, `${field}: ${rule}`);
}

/** 404 code -1: the resource does not exist or belongs to another user (they look the same). */
export function notFound(what: string, id: string): ApiError {
  return new ApiError(404, -1, `${what} not found: ${id}`);
}

/** 400 code -1: the operation is not allowed in the resource's current state. */
export function wrongState(message: string): ApiError {
  return new ApiError(400, -1, message);
}

/** 400 code 1: a business rule refused the request (not a malformed parameter). */
export function businessError(message: string, data?: unknown): ApiError {
  return new ApiError(400, 1, message, data);
}

export function insufficientBalance(needed: string, available: string): ApiError {
  return new ApiError(
    400,
    1,
    `insufficient balance: this needs ${needed} CNY and the balance is ${available} CNY; recharge and retry`,
  );
}

export function notLoggedIn(): ApiError {
  return new ApiError(401, 2, "not logged in: send the header 'Authorization: Bearer <API key>'");
}

export function authenticationFailed(reason: string): ApiError {
  return new ApiError(401, 2, `authentication failed: ${reason}`);
}

/** An error in the alternative shape, whose envelope code equals the HTTP status. */
export function altError(
  status: number,
  error: string,
  message: string,
  headers: Record<string, string> = {},
  field?: string,
): ApiError {
  const alt: AltShape =
    field === undefined ? { error, details: message } : { error, details: message, field };
  return new ApiError(status, status, message, undefined, alt, headers);
}

export function rateLimited(retryAfterSeconds: number): ApiError {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return altError(429, "rate_limited", `too many requests: retry after ${seconds} s`, {
    "retry-after": String(seconds),
  });
}

export function systemError(): ApiError {
  return new ApiError(500, -2, "system error");
}
