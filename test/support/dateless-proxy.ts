/**
 * A plain HTTP proxy in front of the emulator that passes every request and answer through, for what
 * a gateway of the live service may do that the emulator does not: send no `Date` header, or answer a
 * call itself. A connection the emulator drops without an answer is dropped here too, so lost answers
 * stay lost.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";

export interface CloudProxy {
  url: string;
  close(): Promise<void>;
}

export interface ProxyOptions {
  /** Drop the `Date` header of every answer, as some gateways do. */
  withoutDate?: boolean;
  /**
   * Answers a request itself instead of passing it on: the status and the JSON body, or undefined to
   * pass it on. `path` is the request's path; `body` its text.
   */
  answer?(path: string, body: string): { status: number; json: unknown } | undefined;
}

/** A cloud that sends no `Date` header. */
export function datelessProxy(target: string): Promise<CloudProxy> {
  return proxy(target, { withoutDate: true });
}

export async function proxy(target: string, options: ProxyOptions): Promise<CloudProxy> {
  const upstream = new URL(target);
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const own = options.answer?.(req.url ?? "", body.toString());
      if (own) {
        res.writeHead(own.status, { "content-type": "application/json" });
        res.end(JSON.stringify(own.json));
        return;
      }
      if (options.withoutDate) res.sendDate = false;
      const forward = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
          agent,
        },
        (answer) => {
          const headers = { ...answer.headers };
          if (options.withoutDate) delete headers.date;
          res.writeHead(answer.statusCode ?? 502, headers);
          answer.pipe(res);
          answer.on("aborted", () => res.destroy());
        },
      );
      forward.on("error", () => res.socket?.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
