import { chmodSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { chmod, open, rename } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { type Chunks, sameChunks } from "./settled-json";

/** The state file holds API keys and SSH passwords: only its owner may read it. */
const FILE_MODE = 0o600;

/** A state file the emulator cannot use; the message names the file and what is wrong with it. */
export class StateFileError extends Error {
  constructor(path: string, problem: string) {
    super(`state file ${path} ${problem}; fix or remove it, or start without --state`);
    this.name = "StateFileError";
  }
}

/**
 * The `--state FILE`: read once at start, then written whole after changes. Each write goes to
 * `FILE.<pid>.tmp` and is renamed over the file, so a crash leaves the old or the new state, never
 * half of one. Writes are asynchronous and coalesced: every `save()` made while a write runs is
 * served by the one next write, which snapshots the state when it starts. A caller that awaits
 * `save()` (every mutating request, before its answer) therefore knows its change is on disk.
 * The state comes as encoded chunks (settled records reuse theirs), written without being joined.
 */
export class StateFile {
  /**
   * How many writes reached the disk, and the last one's size, the time it blocked the event loop
   * (serializing) and its whole time (serializing and the asynchronous write).
   */
  readonly stats = { writes: 0, bytes: 0, blockedMs: 0, ms: 0 };
  private writing: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private written: Chunks | undefined;
  private readonly temporary: string;

  constructor(
    readonly path: string,
    private readonly serialize: () => Chunks,
  ) {
    this.temporary = `${path}.${process.pid}.tmp`;
  }

  /** The parsed JSON of the file, or undefined when there is none; throws StateFileError otherwise. */
  load(): unknown {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return undefined;
      throw new StateFileError(this.path, `cannot be read (${code ?? String(error)})`);
    }
    if (text.trim() === "") throw new StateFileError(this.path, "is empty");
    try {
      return JSON.parse(text);
    } catch {
      // The parser's message quotes the text, which may hold keys; where it broke is enough.
      throw new StateFileError(this.path, "is not valid JSON (truncated, or edited by hand?)");
    }
  }

  /** Removes `FILE.<pid>.tmp` files that processes which no longer run left behind when they crashed. */
  removeStaleTemporaries(): string[] {
    const prefix = `${basename(this.path)}.`;
    const removed: string[] = [];
    let names: string[];
    try {
      names = readdirSync(dirname(this.path));
    } catch {
      return removed; // A folder that cannot be listed fails the first write, with its reason.
    }
    for (const name of names) {
      const pid = name.startsWith(prefix) ? /^(\d+)\.tmp$/.exec(name.slice(prefix.length))?.[1] : undefined;
      if (pid === undefined || isRunning(Number(pid))) continue;
      rmSync(join(dirname(this.path), name), { force: true });
      removed.push(name);
    }
    return removed;
  }

  /** Writes now, synchronously: at start, so that a file that cannot be written fails the start. */
  saveNow(): void {
    const chunks = this.serialize();
    try {
      writeFileSync(this.temporary, Buffer.concat(chunks), { mode: FILE_MODE });
      chmodSync(this.temporary, FILE_MODE);
      renameSync(this.temporary, this.path);
    } catch (error) {
      throw new StateFileError(this.path, `cannot be written (${describe(error)})`);
    }
    this.written = chunks;
  }

  /** Resolves once a write that began after this call has finished (or found nothing new to write). */
  save(): Promise<void> {
    this.queued ??= settled(this.writing).then(() => {
      this.queued = undefined;
      const write = this.write();
      this.writing = write;
      void settled(write).then(() => {
        if (this.writing === write) this.writing = undefined;
      });
      return write;
    });
    return this.queued;
  }

  private async write(): Promise<void> {
    const started = performance.now();
    const chunks = this.serialize();
    const blockedMs = performance.now() - started;
    if (sameChunks(this.written, chunks)) return;
    const bytes = chunks.reduce((sum, part) => sum + part.length, 0);
    try {
      const file = await open(this.temporary, "w", FILE_MODE);
      try {
        const { bytesWritten } = await file.writev(chunks);
        if (bytesWritten !== bytes) throw new Error(`wrote ${bytesWritten} of ${bytes} bytes`);
      } finally {
        await file.close();
      }
      await chmod(this.temporary, FILE_MODE);
      await rename(this.temporary, this.path);
    } catch (error) {
      throw new StateFileError(this.path, `cannot be written (${describe(error)})`);
    }
    this.written = chunks;
    this.stats.writes += 1;
    this.stats.bytes = bytes;
    this.stats.blockedMs = blockedMs;
    this.stats.ms = performance.now() - started;
  }
}

function settled(promise: Promise<void> | undefined): Promise<void> {
  return promise === undefined ? Promise.resolve() : promise.then(noop, noop);
}

function noop(): void {}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function describe(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
}
