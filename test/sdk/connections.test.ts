/**
 * The transport's connections: a request undici refuses to send gives its connection back, and the
 * client's timeout ends an attempt that undici holds while it connects. Both once left the client
 * waiting forever, outside any timeout.
 */
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  GpuListSchema,
  InputValidationError,
  TimeoutError,
} from "pulumi-gpucloud/sdk";
import { Transport, type CallSpec } from "../../sdk/transport";
import { cloudFor, countCalls, failure, KEY } from "./harness";

const gpuList: CallSpec<typeof GpuListSchema> = {
  method: "GET",
  path: "/gpu/list",
  safety: "read",
  action: "list GPU models",
  schema: GpuListSchema,
};

function transportTo(baseUrl: string, timeoutMs = 5_000): Transport {
  return new Transport({
    baseUrl,
    apiKey: KEY,
    timeoutMs,
    maxRetries: 0,
    backoff: { baseDelayMs: 1, maxDelayMs: 1 },
    maxRateLimitWaitMs: 1_000,
    maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES,
  });
}

describe("a request undici refuses to send", () => {
  const cloud = cloudFor();

  // A content type holding a line break: undici refuses the request as it builds it, before any byte is
  // sent. Its pool took each refusal for back-pressure and retired a connection, so the 33rd request
  // of a 32-connection client used to wait forever.
  const unsendable: CallSpec<typeof GpuListSchema> = {
    ...gpuList,
    method: "POST",
    body: () => ({ body: "{}", contentType: "application/json\r\nx-injected: 1" }),
  };

  it("fails at once, as often as it is made, and the client still sends the next request", async () => {
    const transport = transportTo(cloud().url);
    await cloud().clearRequests();
    const refused: unknown[] = [];
    for (let i = 0; i < 40; i++) refused.push(await failure(transport.call(unsendable)));
    refused.push(
      ...(await Promise.all(Array.from({ length: 80 }, () => failure(transport.call(unsendable))))),
    );
    expect(refused).toHaveLength(120);
    for (const err of refused) {
      expect(err).toBeInstanceOf(InputValidationError);
      expect((err as Error).message).toMatch(
        /^Could not list GPU models: 1 input is invalid \(nothing was sent\): request: cannot be sent \(UND_ERR_INVALID_ARG: invalid content-type header\)/,
      );
    }
    await expect(transport.call(gpuList)).resolves.toMatchObject({ gpu_list: expect.any(Array) });
    const log = await cloud().requests();
    expect(countCalls(log, "/gpu/list", "POST")).toBe(0);
    expect(countCalls(log, "/gpu/list", "GET")).toBe(1);
    await transport.close();
  }, 15_000);
});

describe("an attempt undici holds while it connects", () => {
  // Accepts the connection and never says a word: a TLS handshake that never ends. undici ignores an
  // abort while it connects, until its own connect timeout of 10 s.
  let silent: Server;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.resume();
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it("ends with TimeoutError after the client's timeout, not undici's connect timeout", async () => {
    const transport = transportTo(`https://127.0.0.1:${(silent.address() as AddressInfo).port}`, 200);
    const err = await failure(transport.call(gpuList));
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.message).toContain("no answer within 200 ms");
    // undici is still connecting: the attempt ended on the client's timeout, without waiting for it.
    expect(sockets.size).toBe(1);
    await transport.close();
  }, 5_000);
});
