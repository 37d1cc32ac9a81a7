/**
 * In core's state room, the lock that keeps a state file to one emulator: a listening socket beside the file
 * that names its holder.
 */
import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  existsSync,
  linkSync,
  lstatSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  type Stats,
} from "node:fs";
import { createConnection, createServer, type Server } from "node:net";
import { hostname } from "node:os";
import { basename, dirname, resolve } from "node:path";

/** Who holds a state file: what the holder answers on its lock. */
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

/** The longest path a Unix socket address holds, NUL excluded: 107 bytes on Linux, 103 on the BSDs and macOS. */
const MAX_SOCKET_PATH_BYTES = process.platform === "linux" ? 107 : 103;
/**
 * How long a live holder has to say who it is before the refusal goes without its name: ticks of a timer
 * re-armed after each, not one timer. A process the machine stalls (a loaded CI runner) finds one timer
 * long expired when it runs again and would give up before reading an answer that had arrived; each tick
 * lets the answer in before the next, so the holder gets its second of this process's running time.
 */
const HOLDER_ANSWER_TICKS = 10;
const HOLDER_ANSWER_TICK_MS = 100;
/** A holder's answer is one short JSON line: anything longer is not an emulator's. */
const MAX_HOLDER_ANSWER_BYTES = 4096;
/** Rounds of "take it, else judge its holder": more than one only while others race for the same file. */
const MAX_ATTEMPTS = 8;

/**
 * `FILE.lock`, beside a state file, while an emulator uses it: two emulators saving one file would each
 * overwrite what the other acknowledged. The lock is a listening Unix socket (a named pipe on Windows),
 * which the kernel closes the moment its holder dies, however it dies: a crash, SIGKILL, a container
 * stopped. So a connect() tells a live holder from a dead one with no pid and no host name, which a
 * container restarted as pid 1, or under a new host name, would make lie. A live holder answers a
 * connection with who it is, for the refusal to name; a lock nobody listens on was left by a holder that
 * died (or by an emulator of an earlier version, whose lock was a file) and is taken over, saying so.
 *
 * Emulators on different hosts cannot see each other's sockets: FILE must not be shared over a network
 * file system by emulators of several hosts (containers of one host sharing a volume do see each other).
 */
export class StateLock {
  private constructor(
    private readonly server: Server,
    private readonly address: LockAddress,
  ) {}

  /** Takes the lock of `statePath`; `notices` learns of a lock taken over. Throws StateLockError. */
  static async acquire(statePath: string, notices: string[]): Promise<StateLock> {
    const lock = { statePath, path: `${statePath}.lock` };
    const holder: Holder = { pid: process.pid, host: hostname(), started: new Date().toISOString() };
    const address = lockAddress(lock);
    try {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
        const server = await listen(address.of(lock.path), holder, lock);
        if (server !== undefined) return new StateLock(server, address);
        const verdict =
          process.platform === "win32"
            ? await judgePipe(address.of(lock.path), lock)
            : await judgeLockFile(lock, address);
        if (verdict !== undefined) notices.push(verdict);
      }
      throw new StateLockError(
        `state file ${statePath} is being taken by other emulators at this very moment: start again, one at a time`,
      );
    } catch (error) {
      address.close();
      throw error;
    }
  }

  /** Gives the lock up: closing the socket removes it. */
  release(): void {
    this.server.close();
    this.address.close();
  }
}

interface LockNames {
  statePath: string;
  /** `FILE.lock`. */
  path: string;
}

/** Socket addresses of files in the state file's folder, and what must stay open while they are used. */
interface LockAddress {
  of(path: string): string;
  close(): void;
}

/**
 * How to reach the lock's folder by socket address. A path longer than a socket address holds is
 * reached on Linux through the folder's descriptor (`/proc/self/fd/N/NAME`), held open as long as the
 * lock, since the socket is removed through that address when it closes; elsewhere such a path is
 * refused, naming it. Windows has no socket files: a named pipe named after the state file stands in.
 */
function lockAddress(lock: LockNames): LockAddress {
  const close = () => undefined;
  if (process.platform === "win32") {
    const digest = createHash("sha256").update(resolve(lock.statePath).toLowerCase()).digest("hex");
    return { of: () => `\\\\.\\pipe\\gpucloud-emulator-${digest.slice(0, 32)}`, close };
  }
  // Room for the names the takeover uses beside the lock (FILE.lock.<pid>.<12 hex>.pin).
  const longest = Buffer.byteLength(`${lock.path}.4194304.000000000000.pin`);
  if (longest <= MAX_SOCKET_PATH_BYTES) return { of: (path) => path, close };
  const viaFolder = (descriptor: number, path: string) => `/proc/self/fd/${descriptor}/${basename(path)}`;
  const longestViaFolder = Buffer.byteLength(viaFolder(999_999, `${lock.path}.4194304.000000000000.pin`));
  if (process.platform !== "linux" || longestViaFolder > MAX_SOCKET_PATH_BYTES) {
    throw new StateLockError(
      `state file ${lock.statePath} cannot be locked: the path of its lock ${lock.path} is too long for a socket's ` +
        `address (at most ${MAX_SOCKET_PATH_BYTES} bytes with the names the lock uses beside it); give a shorter --state path`,
    );
  }
  let folder: number;
  try {
    folder = openSync(dirname(lock.path), constants.O_RDONLY | (constants.O_DIRECTORY ?? 0));
  } catch (error) {
    throw new StateLockError(cannotCreate(lock, error));
  }
  return { of: (path) => viaFolder(folder, path), close: () => closeSync(folder) };
}

/** Listens on the lock: the server when it is ours, undefined when something is there already. */
function listen(address: string, holder: Holder, lock: LockNames): Promise<Server | undefined> {
  const answer = `${JSON.stringify(holder)}\n`;
  const server = createServer((connection) => {
    connection.on("error", () => undefined); // A prober that leaves early is no concern of ours.
    connection.end(answer);
  });
  return new Promise((resolvePromise, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE") resolvePromise(undefined);
      else reject(new StateLockError(cannotCreate(lock, bindFailure(error, lock))));
    });
    server.listen({ path: address, exclusive: true }, () => {
      server.removeAllListeners("error");
      server.on("error", () => undefined);
      // The lock must not keep a process alive that has nothing else left to do.
      server.unref();
      resolvePromise(server);
    });
  });
}

/** A named pipe vanishes with its holder: one that answers is held, one that is gone may be taken. */
async function judgePipe(address: string, lock: LockNames): Promise<undefined> {
  const probe = await probeHolder(address);
  if (probe.state === "live") throw new StateLockError(inUse(lock, probe.holder));
  if (probe.state === "unknown") throw new StateLockError(unknowable(lock, probe.code));
  return undefined;
}

/**
 * Judges what is at `FILE.lock`: throws when a holder lives (naming it), takes it over when its holder
 * died (returning what to say), and returns undefined when it changed meanwhile (the next round sees).
 * The lock is judged through a hard link of its own (a pin), which also keeps its inode from being
 * given to a new file, so that the takeover can tell the lock it judged from one made since.
 */
async function judgeLockFile(lock: LockNames, address: LockAddress): Promise<string | undefined> {
  const pin = pinned(lock);
  if (pin === undefined) return undefined;
  try {
    const probe = await probeHolder(address.of(pin.path));
    if (probe.state === "live") throw new StateLockError(inUse(lock, probe.holder));
    if (probe.state === "unknown") throw new StateLockError(unknowable(lock, probe.code));
    if (probe.state === "gone" || !takeOver(lock, pin.stat)) return undefined;
    return takenOver(lock, pin);
  } finally {
    rmSync(pin.path, { force: true });
  }
}

interface Pin {
  path: string;
  stat: Stats;
  /** Set when the lock is a file, as emulators of earlier versions locked with: the holder it names, if any. */
  file?: { holder?: Holder };
}

/** A second name for what is at `FILE.lock` now, or undefined when nothing is. */
function pinned(lock: LockNames): Pin | undefined {
  const path = sideName(lock, "pin");
  try {
    linkSync(lock.path, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    if (lstatSync(lock.path, { throwIfNoEntry: false })?.isDirectory()) {
      throw new StateLockError(
        `state file ${lock.statePath} cannot be locked: ${lock.path} is a folder, where its lock belongs; remove or rename it`,
      );
    }
    throw new StateLockError(cannotCreate(lock, error));
  }
  const stat = lstatSync(path);
  if (!stat.isFile()) return { path, stat };
  return {
    path,
    stat,
    file: { holder: parseHolder(readFileSync(path, "utf8").slice(0, MAX_HOLDER_ANSWER_BYTES)) },
  };
}

/**
 * Removes the dead lock `judged`. Whatever is at `FILE.lock` is moved aside first, under a name of its
 * own, so of two emulators taking it over at once only one removes it: the other moves aside the lock the
 * first has made since, sees it is not the one it judged (the pin keeps that one's inode from being
 * reused), and puts it back.
 */
function takeOver(lock: LockNames, judged: Stats): boolean {
  const aside = sideName(lock, "stale");
  try {
    renameSync(lock.path, aside);
  } catch {
    return false; // Gone already: the next round decides who has it now.
  }
  const moved = lstatSync(aside);
  if (moved.dev === judged.dev && moved.ino === judged.ino) {
    rmSync(aside, { force: true });
    return true;
  }
  try {
    linkSync(aside, lock.path);
  } finally {
    rmSync(aside, { force: true });
  }
  return false;
}

function sideName(lock: LockNames, kind: "pin" | "stale"): string {
  return `${lock.path}.${process.pid}.${randomBytes(6).toString("hex")}.${kind}`;
}

/** @internal What connecting to a lock found. */
export type Probe =
  | { state: "live"; holder?: Holder }
  | { state: "dead" }
  | { state: "gone" }
  | { state: "unknown"; code: string };

/**
 * @internal Connects to the lock: a holder that listens is alive (and says who it is); a socket nobody
 * listens on, or a file that is no socket, is left by one that died.
 */
export function probeHolder(address: string): Promise<Probe> {
  return new Promise((resolvePromise) => {
    const connection = createConnection({ path: address });
    let said = "";
    let connected = false;
    const settle = (probe: Probe) => {
      clearTimeout(timer);
      connection.destroy();
      resolvePromise(probe);
    };
    let ticks = 0;
    const tick = () => {
      ticks += 1;
      if (ticks >= HOLDER_ANSWER_TICKS) settle({ state: "live" });
      else timer = setTimeout(tick, HOLDER_ANSWER_TICK_MS);
    };
    let timer = setTimeout(tick, HOLDER_ANSWER_TICK_MS);
    connection.on("connect", () => (connected = true));
    connection.on("data", (chunk) => {
      said += chunk.toString("utf8");
      if (said.length > MAX_HOLDER_ANSWER_BYTES) settle({ state: "live" });
    });
    connection.on("end", () => settle({ state: "live", holder: parseHolder(said) }));
    connection.on("error", (error: NodeJS.ErrnoException) => {
      if (connected) return settle({ state: "live", holder: parseHolder(said) });
      if (error.code === "ECONNREFUSED" || error.code === "ENOTSOCK") return settle({ state: "dead" });
      if (error.code === "ENOENT") return settle({ state: "gone" });
      // A full backlog: someone listens, and is busy.
      if (error.code === "EAGAIN") return settle({ state: "live" });
      settle({ state: "unknown", code: error.code ?? String(error) });
    });
  });
}

function parseHolder(text: string): Holder | undefined {
  try {
    const parsed = JSON.parse(text) as Partial<Holder>;
    const valid =
      Number.isInteger(parsed.pid) && typeof parsed.host === "string" && typeof parsed.started === "string";
    return valid ? (parsed as Holder) : undefined;
  } catch {
    return undefined;
  }
}

function describeHolder(holder: Holder): string {
  return `pid ${holder.pid} on ${holder.host}, started ${holder.started}`;
}

function inUse(lock: LockNames, holder: Holder | undefined): string {
  const who =
    holder === undefined
      ? `an emulator that answers on ${lock.path} but does not say who it is`
      : `the emulator with ${describeHolder(holder)}`;
  return `state file ${lock.statePath} is in use by ${who}: stop it or give another --state file`;
}

function unknowable(lock: LockNames, code: string): string {
  return (
    `state file ${lock.statePath} cannot be taken: its lock ${lock.path} cannot be checked (${code}), ` +
    `so another user's emulator may hold it; stop that emulator or give another --state file`
  );
}

function takenOver(lock: LockNames, pin: Pin): string {
  if (pin.file === undefined) return `took over ${lock.path}, left by an emulator that no longer runs`;
  const named = pin.file.holder === undefined ? "" : ` (it names ${describeHolder(pin.file.holder)})`;
  return (
    `replaced ${lock.path}, a lock file as emulators of earlier versions left${named}: such a file cannot ` +
    `tell whether its holder still runs, so do not run an earlier version on ${lock.statePath} beside this one`
  );
}

/** libuv reports a bind in a folder that does not exist as EACCES: the user is told the folder is missing. */
function bindFailure(error: NodeJS.ErrnoException, lock: LockNames): NodeJS.ErrnoException {
  if (error.code !== "EACCES" || existsSync(dirname(lock.path))) return error;
  return Object.assign(new Error(`no folder ${dirname(lock.path)}`), { code: "ENOENT" });
}

function cannotCreate(lock: LockNames, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code ?? String(error);
  return `state file ${lock.statePath} cannot be written (${code}): its lock ${lock.path} cannot be created`;
}
