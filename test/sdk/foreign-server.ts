/**
 * A tiny HTTP server standing in for something that is not the GPU cloud (a proxy's 404 page, a
 * captive portal) or for a cloud answer the emulator never gives (a Retry-After of years, a chosen
 * Date, a body without end). It is not our code, so it is fine to fake here.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { request, type Dispatcher } from "undici";

export interface ForeignServer {
  url: string;
  /** Every request's method and URL (path and query), in arrival order. */
  hits: string[];
  close(): Promise<void>;
}

export async function foreignServer(
  answer: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<ForeignServer> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    req.resume();
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers with a JSON body, a status and headers. */
export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

export const POD_PAGE = { code: 0, msg: "success", data: { pod_list: [], total: 0 } };

/** A body without end, as the memory benchmark serves it. */
export { endlessBody } from "../../bench/answer-memory";

export interface Forwarded {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Sends `req` on to `target` (an origin) as it came, and returns the answer. */
async function forward(target: string, req: IncomingMessage, body: Buffer): Promise<Forwarded> {
  const headers = Object.fromEntries(
    Object.entries(req.headers).filter(([name]) => !["host", "connection", "content-length"].includes(name)),
  ) as Record<string, string>;
  const res = await request(target + (req.url ?? "/"), {
    method: req.method as Dispatcher.HttpMethod,
    headers,
    body: body.length > 0 ? body : undefined,
  });
  return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
}

/**
 * A proxy in front of a real emulator: every request goes on to `target` and its answer comes back,
 * except that `answer` may answer instead once the emulator has (it gets the request and the emulator's
 * answer, and returns true when it answered).
 */
export async function proxyTo(
  target: string,
  answer: (req: IncomingMessage, res: ServerResponse, forwarded: Forwarded) => boolean,
): Promise<ForeignServer> {
  return foreignServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      void forward(target, req, Buffer.concat(chunks)).then(
        (forwarded) => {
          if (answer(req, res, forwarded)) return;
          const { status, headers, body } = forwarded;
          res.writeHead(status, {
            "content-type": String(headers["content-type"] ?? "application/json"),
            ...(headers.date ? { date: String(headers.date) } : {}),
            ...(headers["retry-after"] ? { "retry-after": String(headers["retry-after"]) } : {}),
          });
          res.end(body);
        },
        () => res.destroy(),
      );
    });
  });
}
