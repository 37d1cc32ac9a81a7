/**
 * The state file as a list of chunks: rooms whose records pile up (runs) keep the encoded JSON of
 * every record that can no longer change, so a save costs what changed, not every run ever made, and
 * the file is written from the chunks without first joining them into one string.
 */

export type Chunks = Buffer[];

/** One chunk of JSON text. */
export function chunk(text: string): Buffer {
  return Buffer.from(text);
}

const OPEN = chunk("[");
const COMMA = chunk(",");
const CLOSE = chunk("]");

/**
 * Encoded JSON of records, reused for the settled ones. A record counts as settled by `settled`;
 * until then it is encoded afresh each time. Records are keyed by identity, so a restore (which makes
 * new records) starts a fresh cache.
 */
export class SettledJson<T extends object> {
  private readonly encoded = new WeakMap<T, Buffer>();

  constructor(private readonly settled: (record: T) => boolean) {}

  /** `[record, ...]` as JSON.stringify would write it, in chunks. */
  list(records: Iterable<T>): Chunks {
    const chunks: Chunks = [OPEN];
    for (const record of records) {
      if (chunks.length > 1) chunks.push(COMMA);
      chunks.push(this.of(record));
    }
    chunks.push(CLOSE);
    return chunks;
  }

  private of(record: T): Buffer {
    const cached = this.encoded.get(record);
    if (cached !== undefined) return cached;
    const encoded = chunk(JSON.stringify(record));
    if (this.settled(record)) this.encoded.set(record, encoded);
    return encoded;
  }
}

/** Whether two chunk lists hold the same bytes; reused chunks compare by identity, in constant time. */
export function sameChunks(a: Chunks | undefined, b: Chunks): boolean {
  return a !== undefined && a.length === b.length && a.every((part, i) => part === b[i] || part.equals(b[i]));
}
