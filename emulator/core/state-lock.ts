import { randomBytes } from "node:crypto";
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";

/** Who holds a state file: what `FILE.lock` says. */
interface Holder {
  pid: number;
  host: string;
  started: string;
}

/** Why a state file cannot be taken; the message names the holder and what to do. */
export class StateLockError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StateLockError";
  }
}

/**
 * `FILE.lock`, beside a state file, while an emulator uses it: two emulators saving one file would each
 * overwrite what the other acknowledged. The lock is created exclusively (never over another's) and
 * names its holder: pid, host and start time. A lock whose pid no longer runs on this host is left by a
 * crash and is taken over; one of another host cannot be judged from here and is refused, naming it.
 */
export class StateLock {
  private constructor(
    private readonly statePath: string,
    readonly path: string,
    private readonly content: string,
  ) {}

  /** Takes the lock of `statePath`; `notices` learns of a stale lock taken over. Throws StateLockError. */
  static acquire(statePath: string, notices: string[]): StateLock {
    const path = `${statePath}.lock`;
    const holder: Holder = { pid: process.pid, host: hostname(), started: new Date().toISOString() };
    const lock = new StateLock(statePath, path, `${JSON.stringify(holder)}\n`);
    if (lock.create()) return lock;
    const held = readHolder(path);
    if (held === undefined || held.holder.host !== holder.host || isRunning(held.holder.pid)) {
      throw new StateLockError(inUse(statePath, path, held?.holder));
    }
    if (!lock.takeOver(held.text) || !lock.create())
      throw new StateLockError(inUse(statePath, path, readHolder(path)?.holder));
    notices.push(
      `took over ${path} from pid ${held.holder.pid} (started ${held.holder.started}), which no longer runs on this host`,
    );
    return lock;
  }

  /** Gives the lock up, if it is still this emulator's. */
  release(): void {
    try {
      if (readFileSync(this.path, "utf8") === this.content) unlinkSync(this.path);
    } catch {
      // Already gone, or the folder with it: there is nothing left to give up.
    }
  }

  private create(): boolean {
    try {
      writeFileSync(this.path, this.content, { flag: "wx", mode: 0o600 });
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      throw new StateLockError(
        `state file ${this.statePath} cannot be written (${code}): its lock ${this.path} cannot be created`,
      );
    }
  }

  /**
   * Moves a stale lock aside under a name of its own, so that of two emulators taking it over at once
   * only one removes it: the other finds the lock gone or new. A new lock moved aside by mistake is put back.
   */
  private takeOver(staleText: string): boolean {
    const aside = `${this.path}.${process.pid}.${randomBytes(6).toString("hex")}.stale`;
    try {
      renameSync(this.path, aside);
    } catch {
      return true; // Gone already: create() decides who has it now.
    }
    if (readFileSync(aside, "utf8") === staleText) {
      unlinkSync(aside);
      return true;
    }
    try {
      linkSync(aside, this.path);
    } finally {
      unlinkSync(aside);
    }
    return false;
  }
}

function readHolder(path: string): { holder: Holder; text: string } | undefined {
  try {
    const text = readFileSync(path, "utf8");
    const parsed = JSON.parse(text) as Partial<Holder>;
    if (
      !Number.isInteger(parsed.pid) ||
      (parsed.pid as number) <= 0 ||
      typeof parsed.host !== "string" ||
      typeof parsed.started !== "string"
    ) {
      return undefined;
    }
    return { holder: parsed as Holder, text };
  } catch {
    return undefined;
  }
}

function inUse(statePath: string, lockPath: string, holder: Holder | undefined): string {
  if (holder === undefined) {
    return `state file ${statePath} is locked by ${lockPath}, which does not say who holds it; if no emulator uses ${statePath}, remove ${lockPath}`;
  }
  const elsewhere =
    holder.host === hostname() ? "" : " (this emulator cannot tell whether it still runs there)";
  return (
    `state file ${statePath} is in use by the emulator with pid ${holder.pid} on ${holder.host}, started ${holder.started}` +
    `${elsewhere}: stop it or give another --state file; if it no longer runs, remove ${lockPath}`
  );
}

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
