/**
 * In core's controls, the request log (GET and DELETE /_emulator/requests), for tests that count calls.
 */

/** One API call as the request log keeps it (GET /_emulator/requests). The key is a fingerprint. */
export interface LoggedRequest {
  method: string;
  path: string;
  key: string | null;
  /** null when the connection was dropped without an answer (fault kinds reset, drop_after_commit). */
  status: number | null;
  /** Simulated Unix seconds. */
  time: number;
}

/** Long benchmark runs must not grow the log without bound; tests clear it long before this. */
const MAX_ENTRIES = 50_000;

export class RequestLog {
  private entries: LoggedRequest[] = [];

  start(entry: Omit<LoggedRequest, "status">): LoggedRequest {
    const logged = { ...entry, status: null };
    this.entries.push(logged);
    if (this.entries.length > MAX_ENTRIES) this.entries.splice(0, this.entries.length - MAX_ENTRIES);
    return logged;
  }

  list(): LoggedRequest[] {
    return this.entries.map((e) => ({ ...e }));
  }

  clear(): void {
    this.entries = [];
  }
}
