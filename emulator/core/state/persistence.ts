/**
 * In core's state room, the state file (`--state FILE`): read at start, written after every change through a
 * temporary file, readable by its owner only.
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fchmodSync,
  fsyncSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  writevSync,
} from "node:fs";
import { open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { type Chunks, sameChunks } from "./settled-json";
import { StateLock } from "./lock";

/** The state file holds API keys and SSH passwords: only its owner may read it. */
const FILE_MODE = 0o600;
/**
 * A temporary file is created, never opened: O_EXCL fails on anything already at the name, a symbolic
 * link (dangling or not) included, so no link placed there in advance can aim the write at another file.
 */
const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);
const READ_NO_LINK = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);
/** `FILE.<pid>.<random>.tmp`, and `FILE.<pid>.tmp` as emulators before the random part named them. */
const TEMPORARY = /^\d+(?:\.[0-9a-f]+)?\.tmp$/;

/** A state file the emulator cannot use; the message names the file, what is wrong and what to do. */
export class StateFileError extends Error {
  constructor(path: string, problem: string, advice = "fix or remove it, or start without --state") {
    super(`state file ${path} ${problem}; ${advice}`);
    this.name = "StateFileError";
  }
}

/**
 * The `--state FILE`: claimed (its lock taken) and read once at start, then written whole after
 * changes. Each write goes to a new temporary file beside it (`FILE.<pid>.<random>.tmp`, created
 * exclusively), is flushed to disk and renamed over the file, so a crash leaves the old or the new state,
 * never half of one. Writes are asynchronous and coalesced: every `save()` made while a write runs is
 * served by the one next write, which snapshots the state when it starts. A caller that awaits `save()`
 * (every mutating request, before its answer) therefore knows its change is on disk. The state comes as
 * encoded chunks (settled records reuse theirs), written without being joined.
 *
 * A FILE that is a symbolic link is refused: saving replaces the link with a file, which would silently
 * part the emulator from the file the link names; the user gives that file's own path instead.
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
  private lock: StateLock | undefined;

  constructor(
    readonly path: string,
    private readonly serialize: () => Chunks,
  ) {}

  /**
   * Takes the file for this emulator: refuses a symbolic link and a file another emulator holds, takes
   * over a lock left by a crash and removes temporary files left by one. Returns what the start should say.
   */
  async claim(): Promise<string[]> {
    const notices: string[] = [];
    this.refuseLink();
    this.lock = await StateLock.acquire(this.path, notices);
    for (const removed of this.removeStaleTemporaries()) {
      notices.push(`removed ${removed}, left behind by an emulator that crashed while saving`);
    }
    return notices;
  }

  /** Whether this emulator holds the file (claimed, not yet released). */
  get held(): boolean {
    return this.lock !== undefined;
  }

  /** Gives the file up for another emulator (at close, or when the start fails). */
  release(): void {
    this.lock?.release();
    this.lock = undefined;
  }

  /** The parsed JSON of the file, or undefined when there is none; throws StateFileError otherwise. */
  load(): unknown {
    let text: string;
    try {
      const descriptor = openSync(this.path, READ_NO_LINK);
      try {
        text = readFileSync(descriptor, "utf8");
      } finally {
        closeSync(descriptor);
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return undefined;
      if (code === "ELOOP") this.refuseLink();
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

  /** Writes now, synchronously: at start, so that a file that cannot be written fails the start. */
  saveNow(): void {
    this.requireLock();
    const chunks = this.serialize();
    const bytes = chunks.reduce((sum, part) => sum + part.length, 0);
    const temporary = this.temporaryName();
    let created = false;
    try {
      const descriptor = openSync(temporary, CREATE_NEW, FILE_MODE);
      created = true;
      try {
        const written = writevSync(descriptor, chunks);
        if (written !== bytes) throw new Error(`wrote ${written} of ${bytes} bytes`);
        fchmodSync(descriptor, FILE_MODE);
        fsyncSync(descriptor);
      } finally {
        closeSync(descriptor);
      }
      renameSync(temporary, this.path);
    } catch (error) {
      if (created) rmSync(temporary, { force: true });
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
    this.requireLock();
    const started = performance.now();
    const chunks = this.serialize();
    const blockedMs = performance.now() - started;
    if (sameChunks(this.written, chunks)) return;
    const bytes = chunks.reduce((sum, part) => sum + part.length, 0);
    const temporary = this.temporaryName();
    try {
      await writeNewFile(temporary, chunks, bytes);
      await rename(temporary, this.path).catch(async (error: unknown) => {
        await rm(temporary, { force: true });
        throw error;
      });
    } catch (error) {
      throw new StateFileError(this.path, `cannot be written (${describe(error)})`);
    }
    this.written = chunks;
    this.stats.writes += 1;
    this.stats.bytes = bytes;
    this.stats.blockedMs = blockedMs;
    this.stats.ms = performance.now() - started;
  }

  /** Only the lock's holder writes FILE: a write without it could overwrite another emulator's state. */
  private requireLock(): void {
    if (this.lock === undefined) {
      throw new StateFileError(
        this.path,
        "is not held by this emulator",
        "open the emulator before it saves",
      );
    }
  }

  /** A new name each write: nobody can place anything at it in advance (and O_EXCL refuses what is). */
  private temporaryName(): string {
    return `${this.path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  }

  private refuseLink(): void {
    let target: string;
    try {
      if (!lstatSync(this.path).isSymbolicLink()) return;
      target = readlinkSync(this.path);
    } catch {
      return; // No file yet, or none to judge: reading or writing it says what is wrong.
    }
    throw new StateFileError(
      this.path,
      `is a symbolic link (to ${target}): saving replaces the file and would leave the link's target behind`,
      "give the path of the file itself",
    );
  }

  /**
   * Removes the temporary files of this FILE that an emulator left behind when it crashed while saving:
   * only the lock's holder writes them, so once this emulator holds it, any there are left over.
   */
  private removeStaleTemporaries(): string[] {
    const prefix = `${basename(this.path)}.`;
    const removed: string[] = [];
    let names: string[];
    try {
      names = readdirSync(dirname(this.path));
    } catch {
      return removed; // A folder that cannot be listed fails the first write, with its reason.
    }
    for (const name of names) {
      if (!name.startsWith(prefix) || !TEMPORARY.test(name.slice(prefix.length))) continue;
      rmSync(join(dirname(this.path), name), { force: true });
      removed.push(name);
    }
    return removed;
  }
}

/**
 * Writes `chunks` to a file that must not exist yet, mode 0600, flushed to disk before it is closed, so
 * a rename that follows never puts an empty or partial file in place (a crash or a power cut).
 */
export async function writeNewFile(path: string, chunks: Chunks, bytes: number): Promise<void> {
  const file = await open(path, CREATE_NEW, FILE_MODE);
  try {
    const { bytesWritten } = await file.writev(chunks);
    if (bytesWritten !== bytes) throw new Error(`wrote ${bytesWritten} of ${bytes} bytes`);
    await file.chmod(FILE_MODE);
    await file.sync();
  } catch (error) {
    await file.close();
    await rm(path, { force: true });
    throw error;
  }
  await file.close();
}

function settled(promise: Promise<void> | undefined): Promise<void> {
  return promise === undefined ? Promise.resolve() : promise.then(noop, noop);
}

function noop(): void {}

function describe(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
}
