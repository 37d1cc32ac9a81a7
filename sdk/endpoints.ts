/**
 * An endpoint stated once. Each API area holds one table of its endpoints (`endpoint(...)` entries): the
 * route, the retry safety class (whether a POST may be resent: see retry-policy.ts), the words its errors
 * use, the request it sends and the checks of it, the schema of its answer and what to do when an unsafe
 * call's outcome is unknown. A method of an area is one line over its entry: `send` for one call, `walk`
 * for every page of a listed endpoint. Answer types are inferred from the entry's schema, so a method
 * whose declared type drifts from its table entry does not compile.
 */
import type { z } from "zod";
import { goneCountsAsDone, inputValidationError, type InputIssue, type InputValidationError } from "./errors";
import { paginate, type PaginateOptions } from "./pagination";
import type { CallSafety } from "./retry-policy";
import { buildPath, type CallOptions, type Query, type RequestBody, type Transport } from "./transport";

type Method = "GET" | "POST";

/** "GET /instance/info"; `{name}` stands for a path segment the request fills in. */
type Route = `${Method} /${string}`;

/** What one call sends, built from the method's arguments, with any problem found in them. */
export interface Request {
  /** Problems with the arguments: the call is refused before anything is sent. */
  issues?: InputIssue[];
  query?: Query;
  json?: unknown;
  /** Builds a fresh body for each attempt (multipart uploads). */
  body?: () => RequestBody;
  /** Values of the route's `{name}` segments, URI-encoded into the path. */
  segments?: Record<string, string>;
  maxRetries?: number;
  /** Overrides the client's per-request timeout for this call (uploads of large files). */
  timeoutMs?: number;
}

/** The keys of an answer that hold a list. */
type ListKey<T> = keyof { [K in keyof T as T[K] extends readonly unknown[] ? K : never]: K };

type ItemOf<T, K extends keyof T> = T[K] extends readonly (infer I)[] ? I : never;

export interface EndpointFacts<A extends unknown[], S extends z.ZodType, K> {
  /** Verb phrase for error messages: "read instance i-1", or one for every call: "list pods". */
  action: string | ((...args: A) => string);
  /**
   * The verb phrase of a call refused before sending, where `action` would quote an argument that may
   * itself be the bad input: "create instance from pod".
   */
  checkAction?: string;
  request?: (...args: A) => Request;
  /** What the caller should do when an unsafe call's outcome is unknown. */
  reconcile?: string;
  /** Deletes: the cloud saying the resource does not exist means it is already deleted. */
  goneIsDone?: undefined extends z.output<S> ? true : never;
  /** A listed endpoint: the answer's key that holds the page's items (`walk` reads it). */
  items?: K;
  /** The largest page the endpoint serves, where the API states one. */
  maxPageSize?: number;
}

/** A listed endpoint always names the key of its items; any other never does. */
type Listing<K> = [K] extends [never] ? { items?: undefined } : { items: K };

export type Endpoint<A extends unknown[], S extends z.ZodType, K = never> = EndpointFacts<A, S, K> &
  Listing<K> & {
    method: Method;
    /** Relative to the API base, `{name}` segments unfilled. */
    path: string;
    safety: CallSafety;
    answer: S;
  };

/** An entry of an area's table; `answer` is the schema of the envelope's `data`, which the call returns. */
export function endpoint<A extends unknown[], S extends z.ZodType, K extends ListKey<z.output<S>> = never>(
  route: Route,
  safety: CallSafety,
  answer: S,
  facts: EndpointFacts<A, S, K>,
): Endpoint<A, S, K> {
  const space = route.indexOf(" ");
  const method = route.slice(0, space) as Method;
  // `items` is in facts exactly when K is a key (K is inferred from it), as Listing<K> states.
  return { method, path: route.slice(space + 1), safety, answer, ...facts } as Endpoint<A, S, K>;
}

function actionOf<A extends unknown[]>(
  endpoint: { action: string | ((...args: A) => string) },
  args: A,
): string {
  return typeof endpoint.action === "string" ? endpoint.action : endpoint.action(...args);
}

function filled(path: string, segments: Record<string, string> = {}): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(segments[name]));
}

/** The path with its query string, as the transport sends it for these arguments. */
export function pathOf<A extends unknown[]>(
  endpoint: Pick<Endpoint<A, z.ZodType>, "path" | "request">,
  args: A,
): string {
  const { segments, query } = endpoint.request?.(...args) ?? {};
  return buildPath(filled(endpoint.path, segments), query);
}

/** The error of a call refused before anything was sent: what it was for, and every bad input. */
export function refusal(
  endpoint: Pick<Endpoint<never, z.ZodType>, "method" | "path" | "checkAction">,
  issues: InputIssue[],
  action = endpoint.checkAction ?? `call ${endpoint.method} ${endpoint.path}`,
): InputValidationError {
  return inputValidationError({ action, method: endpoint.method, path: endpoint.path }, issues);
}

/** One call of the endpoint with these arguments: checked, then handed to the transport. */
export async function send<A extends unknown[], S extends z.ZodType, K>(
  transport: Transport,
  endpoint: Endpoint<A, S, K>,
  args: A,
  options: CallOptions,
): Promise<z.output<S>> {
  const { method, path, safety, answer, reconcile } = endpoint;
  const { issues = [], segments, ...request } = endpoint.request?.(...args) ?? {};
  if (issues.length > 0) throw refusal(endpoint, issues, endpoint.checkAction ?? actionOf(endpoint, args));
  const spec = { ...request, method, path: filled(path, segments), safety, schema: answer, reconcile };
  const call = transport.call({ ...spec, action: actionOf(endpoint, args) }, options);
  if (!endpoint.goneIsDone) return call;
  await goneCountsAsDone(call);
  // goneIsDone is allowed only where the answer may be undefined (see EndpointFacts).
  return undefined as z.output<S>;
}

/** Every item of a listed endpoint, page by page (see pagination.ts for when a walk ends). */
export function walk<
  Q extends { page?: number; page_size?: number },
  S extends z.ZodType<{ total?: number }>,
  K extends keyof z.output<S>,
>(
  transport: Transport,
  endpoint: Endpoint<[Q], S, K> & { items: K },
  filters: NoInfer<Q>,
  options: PaginateOptions,
): AsyncIterable<ItemOf<z.output<S>, K>> {
  const max = endpoint.maxPageSize;
  const pageSize = max === undefined ? options.pageSize : Math.min(options.pageSize ?? max, max);
  const list = { action: actionOf(endpoint, [filters]), method: endpoint.method, path: endpoint.path };
  return paginate(
    async (page, page_size) => {
      const answer = await send(transport, endpoint, [{ ...filters, page, page_size }], options);
      return { items: answer[endpoint.items] as ItemOf<z.output<S>, K>[], total: answer.total };
    },
    { ...options, pageSize },
    list,
  );
}
