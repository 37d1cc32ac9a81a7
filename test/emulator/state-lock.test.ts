/**
 * One emulator per state file (emulator/core/state/lock.ts): the lock is a listening socket beside the
 * file, which the kernel closes when its holder dies, so a live holder is refused by name and a dead
 * one's lock is taken over, whatever its pid or host name said. The CLI suite kills a holder with SIGKILL
 * and starts two emulators at once as processes (cli.test.ts); these run emulators in this process.
 */
import { spawnSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { Emulator } from "pulumi-gpucloud/emulator";
import { probeHolder } from "../../emulator/core/state/lock";
import { createInstance, startTestEmulator, type TestEmulator } from "./helpers";

/** The longest Unix socket address on Linux, NUL excluded. */
const LINUX_SOCKET_PATH_BYTES = 107;

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gpucloud-lock-"));
  file = join(dir, "state.json");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Starts an emulator on `file` and returns what its start said, or why it was refused. */
async function opened(path = file): Promise<{ emulator: Emulator; notices: string[] }> {
  const emulator = new Emulator({ stateFile: path });
  await emulator.open();
  return { emulator, notices: emulator.notices };
}

/** What a holder killed with SIGKILL leaves at `path`: its socket file, on which nobody listens any more. */
function leaveDeadHolder(path: string): void {
  const holder = `require("net").createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, "SIGKILL"))`;
  expect(spawnSync(process.execPath, ["-e", holder]).signal).toBe("SIGKILL");
}

function listening(server: Server, path: string): Promise<void> {
  return new Promise((resolve) => server.listen(path, resolve));
}

describe("one emulator per state file", () => {
  it("refuses a second emulator on the same file, naming the holder, and lets the next one in after close", async () => {
    const first = await startTestEmulator({ stateFile: file });
    const { instance_uuid } = await createInstance(first);
    const saved = readFileSync(file, "utf8");
    expect(lstatSync(`${file}.lock`).isSocket()).toBe(true);
    await expect(new Emulator({ stateFile: file }).open()).rejects.toThrow(
      new RegExp(
        `^state file ${file} is in use by the emulator with pid ${process.pid} on ${hostname()}, started \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z: stop it or give another --state file$`,
      ),
    );
    expect(readFileSync(file, "utf8")).toBe(saved);
    // The first emulator's acknowledged changes keep being saved: the refused one wrote nothing.
    await first.api("POST", "/instance/update_title", { body: { instance_uuid, title: "kept" } });
    await first.close();
    expect(existsSync(`${file}.lock`)).toBe(false);

    const next = await startTestEmulator({ stateFile: file });
    try {
      expect((await next.api("GET", "/instance/info", { query: { instance_uuid } })).body.data.title).toBe(
        "kept",
      );
    } finally {
      await next.close();
    }
  });

  it("takes over the socket of a holder killed with SIGKILL, saying so", async () => {
    leaveDeadHolder(`${file}.lock`);
    expect(lstatSync(`${file}.lock`).isSocket()).toBe(true);
    const { emulator, notices } = await opened();
    expect(notices).toEqual([`took over ${file}.lock, left by an emulator that no longer runs`]);
    await emulator.close();
    expect(readdirSync(dir)).toEqual(["state.json"]);
  });

  it.each([
    [
      "a previous container whose pid was ours (pid 1, as every container's first process)",
      () => process.pid,
    ],
    [
      "another host name (a container restarted under a new one), with a pid that runs here",
      () => process.ppid,
    ],
  ])("takes over a lock file of an earlier version left by %s", async (_case, pid) => {
    const held = { pid: pid(), host: "3f2a9c1e7b4d", started: "2026-01-01T00:00:00.000Z" };
    writeFileSync(`${file}.lock`, JSON.stringify(held));
    const { emulator, notices } = await opened();
    expect(notices).toEqual([
      `replaced ${file}.lock, a lock file as emulators of earlier versions left (it names pid ${held.pid} on ` +
        `3f2a9c1e7b4d, started 2026-01-01T00:00:00.000Z): such a file cannot tell whether its holder still runs, ` +
        `so do not run an earlier version on ${file} beside this one`,
    ]);
    expect(lstatSync(`${file}.lock`).isSocket()).toBe(true);
    await emulator.close();
  });

  it("takes over an empty lock file, which names nobody", async () => {
    writeFileSync(`${file}.lock`, "");
    const { emulator, notices } = await opened();
    expect(notices).toEqual([
      `replaced ${file}.lock, a lock file as emulators of earlier versions left: such a file cannot tell ` +
        `whether its holder still runs, so do not run an earlier version on ${file} beside this one`,
    ]);
    await emulator.close();
  });

  it("refuses a live holder that does not say who it is, and leaves its lock alone", async () => {
    const stranger = createServer((connection) => connection.on("error", () => undefined));
    await listening(stranger, `${file}.lock`);
    try {
      await expect(new Emulator({ stateFile: file }).open()).rejects.toThrow(
        `state file ${file} is in use by an emulator that answers on ${file}.lock but does not say who it is: stop it or give another --state file`,
      );
      expect(lstatSync(`${file}.lock`).isSocket()).toBe(true);
    } finally {
      stranger.close();
    }
  });

  it("hears a holder's answer that arrived while this process was stalled longer than the holder's second", async () => {
    const holder = { pid: 4242, host: "elsewhere", started: "2026-11-29T00:00:00.000Z" };
    const answering = createServer((connection) => connection.end(JSON.stringify(holder)));
    await listening(answering, `${file}.lock`);
    try {
      const probe = probeHolder(`${file}.lock`);
      // A loaded machine stalls this process: a single timer of a second has expired when it runs again.
      const stalledUntil = Date.now() + 1500;
      while (Date.now() < stalledUntil);
      expect(await probe).toEqual({ state: "live", holder });
    } finally {
      answering.close();
    }
  });

  it("refuses a folder where the lock belongs, naming it", async () => {
    mkdirSync(`${file}.lock`);
    await expect(new Emulator({ stateFile: file }).open()).rejects.toThrow(
      `state file ${file} cannot be locked: ${file}.lock is a folder, where its lock belongs; remove or rename it`,
    );
  });

  it("lets exactly one of two emulators started at once have the file, fresh or over a dead holder's lock", async () => {
    for (const round of ["fresh", "over a dead lock", "over a lock file"]) {
      if (round === "over a lock file") writeFileSync(`${file}.lock`, "");
      const starts = await Promise.allSettled([
        startTestEmulator({ stateFile: file }),
        startTestEmulator({ stateFile: file }),
      ]);
      const won = starts.filter((s): s is PromiseFulfilledResult<TestEmulator> => s.status === "fulfilled");
      const lost = starts.filter((s): s is PromiseRejectedResult => s.status === "rejected");
      expect([round, won.length, lost.length]).toEqual([round, 1, 1]);
      expect(String(lost[0].reason)).toContain(
        `state file ${file} is in use by the emulator with pid ${process.pid}`,
      );
      await won[0].value.close();
      if (round === "fresh") leaveDeadHolder(`${file}.lock`);
    }
  });

  it("locks a state file whose lock path is longer than a socket address holds", async () => {
    const deep = join(dir, "d".repeat(Math.max(1, LINUX_SOCKET_PATH_BYTES - dir.length)));
    mkdirSync(deep);
    const long = join(deep, "state.json");
    expect(Buffer.byteLength(`${long}.lock`)).toBeGreaterThan(LINUX_SOCKET_PATH_BYTES);
    if (process.platform !== "linux") {
      await expect(new Emulator({ stateFile: long }).open()).rejects.toThrow("give a shorter --state path");
      return;
    }
    const { emulator } = await opened(long);
    try {
      expect(lstatSync(`${long}.lock`).isSocket()).toBe(true);
      await expect(new Emulator({ stateFile: long }).open()).rejects.toThrow(
        `state file ${long} is in use by the emulator with pid ${process.pid}`,
      );
    } finally {
      await emulator.close();
    }
    expect(readdirSync(deep)).toEqual(["state.json"]);
  });

  it("gives the lock back when the start fails, so the next start is not refused", async () => {
    writeFileSync(file, "not json");
    await expect(new Emulator({ stateFile: file }).open()).rejects.toThrow("is not valid JSON");
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});
