/**
 * The client's connections: one undici Client (one keep-alive connection) per attempt in flight, kept
 * idle for the next attempt once its request has settled. The transport takes one only while it holds
 * one of the Slots, so there are never more connections than slots.
 *
 * Not undici's Pool: a Pool takes a request that its connection refuses before sending (a header value
 * holding a line break, say) for back-pressure, and never hands that connection another request. In
 * undici 7 a 32-connection pool that had refused 32 such requests queued every later request forever,
 * where no abort reaches it. A Client that refuses a request stays as usable as before.
 */
import type { Client } from "undici";
import { undici } from "./http-library";

/**
 * How long an idle connection stays open for the next attempt when the server does not say. A server's
 * `Keep-Alive: timeout=N` takes its place: undici closes the connection 2 s before N (63 s against the
 * emulator, which keeps idle connections 65 s).
 */
const KEEP_ALIVE_MS = 10_000;

export class Connections {
  private readonly idle: Client[] = [];
  private readonly open = new Set<Client>();
  private closed = false;

  /**
   * `origin`: scheme, host and port of every request. `maxResponseBytes`: a connection counts the bytes
   * of an answer's body as they arrive and ends the answer once they pass this (UND_ERR_RES_EXCEEDED_MAX_SIZE).
   */
  constructor(
    private readonly origin: string,
    private readonly maxResponseBytes: number,
  ) {}

  /** The connection used last (the likeliest to be still open), or a new one. */
  take(): Client {
    if (this.closed) throw new (undici().errors.ClientClosedError)();
    const connection =
      this.idle.pop() ??
      new (undici().Client)(this.origin, {
        keepAliveTimeout: KEEP_ALIVE_MS,
        maxResponseSize: this.maxResponseBytes,
      });
    this.open.add(connection);
    return connection;
  }

  /**
   * Takes back a connection after its attempt. One whose request undici has not settled yet (the
   * attempt's timeout or abort ended it while undici still held the request, as it does while
   * connecting) is destroyed, which settles that request, and never used again.
   */
  giveBack(connection: Client, requestSettled: boolean): void {
    if (!requestSettled) {
      this.open.delete(connection);
      void connection.destroy().catch(() => undefined);
    } else if (!this.closed) {
      this.idle.push(connection);
    }
  }

  /** Closes every connection once its request is done; taking one afterwards fails. */
  async close(): Promise<void> {
    this.closed = true;
    this.idle.length = 0;
    await Promise.all([...this.open].map((connection) => connection.close()));
  }
}
