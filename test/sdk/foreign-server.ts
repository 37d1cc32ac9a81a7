/**
 * A tiny HTTP server standing in for something that is not the GPU cloud (a proxy's 404 page, a
 * captive portal) or for a cloud answer the emulator never gives (a Retry-After of years, a chosen
 * Date). It is not our code, so it is fine to fake here.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

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
