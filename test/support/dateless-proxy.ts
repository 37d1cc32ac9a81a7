/**
 * A cloud that sends no `Date` header: a plain HTTP proxy in front of the emulator that passes every
 * request and answer through but that header (as some gateways do). A connection the emulator drops
 * without an answer is dropped here too, so lost answers stay lost.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";

export interface DatelessProxy {
  url: string;
  close(): Promise<void>;
}

export async function datelessProxy(target: string): Promise<DatelessProxy> {
  const upstream = new URL(target);
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    res.sendDate = false;
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
        delete headers.date;
        res.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(res);
        answer.on("aborted", () => res.destroy());
      },
    );
    forward.on("error", () => res.socket?.destroy());
    req.pipe(forward);
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
