/**
 * Scenario 4, the emulator restarted with `--state` in the middle of a run: a fleet is being created
 * through one provider server when the emulator process (the `gpucloud-emulator` CLI) is killed with
 * SIGKILL and started again on the same port from its state file. Every create the provider acknowledged
 * must still be there with its title, nothing may be orphaned, and no create may fail: the outage outlasts
 * the client's retries of one request, so creates waiting for their instance must ride it out.
 * The emulator answers a change only once it is saved, so what it answered survives the kill; an
 * instance whose create was still in flight (made, not yet saved, never answered) may be gone after the
 * restart, and its creator sends the create again. So among the instances held at the kill and missing
 * from the state file, none may be one a provider state knows; the others are counted, not forbidden.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import * as readline from "node:readline";
import { REPO_ROOT, type Harness, type ResourceState } from "../harness";
import { DEMO_KEY } from "../emulator/helpers";
import { DOORS, gpucloudHarness, providerConfig } from "../support/providers";
import { bounded, seconds } from "./schedule";
import { reportFigure } from "../support/figures";
import { portToReuse } from "../support/ports";

const CREATES = 30;
const CONCURRENCY = 10;
/** The kill comes once this many creates have been acknowledged. */
const RESTART_AFTER = 10;
const CLI = path.join(REPO_ROOT, "dist", "emulator", "cli.js");
/**
 * How long the emulator stays down: longer than the client's own retries of one request can ride out
 * (3 resends after backoffs of at most 0.5, 1 and 2 s: 3.5 s), so creates live through it only by
 * retrying until their own deadline.
 */
const OUTAGE_MS = 5_000;
/** The provider's request timeout: small, so a create cut off by the kill is settled in seconds. */
const REQUEST_TIMEOUT_MS = "2000";

jest.setTimeout(240_000);

interface EmulatorProcess {
  child: ChildProcess;
  url: string;
}

async function startCli(args: string[]): Promise<EmulatorProcess> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const url = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).once("line", (line) => {
      const match = /listening on (\S+)/.exec(line);
      if (match) resolve(match[1]);
      else reject(new Error(`unexpected first line: ${line}`));
    });
    child.once("exit", (code) => reject(new Error(`the emulator exited (${code}) before listening`)));
  });
  return { child, url };
}

function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGKILL");
  return exited;
}

interface Dump {
  now: number;
  rooms: { instances: { instance_uuid: string; title: string }[] };
}

describe.each(DOORS)(
  "through the %s door, an emulator killed and restarted from its state file in the middle of a run",
  (door) => {
    let emu: EmulatorProcess;
    let h: Harness;
    const stateFile = path.join(mkdtempSync(path.join(tmpdir(), "gpucloud-state-")), "state.json");
    const args = (port: string) => [
      "--port",
      port,
      "--state",
      stateFile,
      "--time-scale",
      "0",
      "--balance",
      "1000000000",
    ];
    const admin = async (method: string, what: string, body?: unknown) => {
      const res = await fetch(`${emu.url}/_emulator${what}`, {
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return res.json();
    };

    beforeAll(async () => {
      // Not port 0: the restart reuses the port, and a port from listen(0) may be drawn by another
      // worker's listen(0) while the emulator is down.
      emu = await startCli(args(String(await portToReuse())));
      h = await gpucloudHarness({
        door,
        config: providerConfig(emu.url, undefined, { "gpucloud:requestTimeoutMs": REQUEST_TIMEOUT_MS }),
      });
    });
    afterAll(async () => {
      await h?.stop();
      if (emu) await killed(emu.child);
    });

    it("loses nothing that was acknowledged", async () => {
      const started = performance.now();
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const api = async (what: string): Promise<any> => {
        const res = await fetch(`${emu.url}/api/open/v2${what}`, {
          headers: { authorization: `Bearer ${DEMO_KEY}` },
        });
        return ((await res.json()) as { data: unknown }).data;
      };
      const spec = {
        podUuid: (await api("/pod/list?name=ComfyUI")).pod_list[0].uuid,
        gpuUuid: (await api("/gpu/list")).gpu_list.find((g: { gpu_name: string }) => g.gpu_name === "4090D")
          .gpu_uuid,
        gpuNums: 1,
      };
      const inputs = await Promise.all(
        Array.from({ length: CREATES }, (_, i) => h.checked("Instance", { ...spec, title: `keep-${i}` })),
      );
      const acknowledged: ResourceState[] = [];
      let restarted: Promise<void> | undefined;
      let atKill: Dump | undefined;
      let saved: Dump | undefined;
      let downMs = 0;
      let stopped = false;

      const restart = async (): Promise<void> => {
        const port = new URL(emu.url).port;
        atKill = (await admin("GET", "/state")) as Dump;
        await killed(emu.child);
        const down = performance.now();
        saved = JSON.parse(readFileSync(stateFile, "utf8")) as Dump;
        await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
        emu = await startCli(args(port));
        downMs = performance.now() - down;
      };
      // The clock moves from the test, through the admin API of whichever emulator process is up.
      const ticker = (async () => {
        while (!stopped) {
          await admin("POST", "/clock/advance", { seconds: 10 }).catch(() => undefined);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      })();
      const results = await bounded(
        CONCURRENCY,
        inputs.map((news) => async () => {
          const state = await h.create("Instance", news);
          acknowledged.push(state);
          if (acknowledged.length === RESTART_AFTER) restarted = restart();
          return state;
        }),
      );
      await restarted;
      stopped = true;
      await ticker;

      const failures = results.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
      const after = (await admin("GET", "/state")) as Dump;
      const titles = new Map(after.rooms.instances.map((i) => [i.instance_uuid, i.title]));
      const lost = acknowledged.filter((s) => titles.get(s.id) !== s.outputs.title);
      const inFile = new Set(saved!.rooms.instances.map((i) => i.instance_uuid));
      const unsavedAtKill = atKill!.rooms.instances.filter((i) => !inFile.has(i.instance_uuid));
      const known = new Set(acknowledged.map((s) => s.id));
      const answeredButUnsaved = unsavedAtKill.filter((i) => known.has(i.instance_uuid));
      const orphaned = [...titles.keys()].filter((id) => !acknowledged.some((s) => s.id === id));

      reportFigure(
        "faults",
        `faults[4 emulator killed and restarted with --state]: door=${door} creates=${CREATES} acknowledged=${acknowledged.length} ` +
          `failed=${failures.length} killed-after=${RESTART_AFTER} held-at-kill=${atKill!.rooms.instances.length} ` +
          `down=${seconds(downMs)} unsaved-in-flight-at-kill=${unsavedAtKill.length} answered-but-unsaved=${answeredButUnsaved.length} acknowledged-lost=${lost.length} orphaned=${orphaned.length} ` +
          `clock-kept=${after.now >= atKill!.now} in ${seconds(performance.now() - started)}`,
      );
      expect({ failures, lost, answeredButUnsaved, orphaned }).toEqual({
        failures: [],
        lost: [],
        answeredButUnsaved: [],
        orphaned: [],
      });
      expect(acknowledged).toHaveLength(CREATES);
      expect(after.now).toBeGreaterThanOrEqual(atKill!.now);
    });
  },
);
