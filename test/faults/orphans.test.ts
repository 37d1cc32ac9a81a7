/**
 * Scenario 3, the provider killed in the middle of a fleet create: Pulumi keeps a pending create and no
 * id while the instance exists and bills. The orphan finder (provider/orphans.ts and the
 * gpucloud-orphans CLI) must list exactly that instance, flagged as the pending create's.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { findOrphans, formatReport, type StackExport } from "pulumi-gpucloud";
import { asStackExport } from "../../provider/orphans";
import { REPO_ROOT, secret, type Harness, type Props, type ResourceState } from "../harness";
import { FileStore } from "../../testing/state";
import { DEMO_KEY, gpuUuid, pod, startTestEmulator, type TestEmulator } from "../emulator/helpers";
import { gpucloudHarness, providerConfig, providerTexts } from "../support/providers";
import { startWorld, type World } from "../support/world";
import { FAULT_EMULATOR, seconds } from "./schedule";
import { reportFigure } from "../support/figures";
import { terminalControls } from "../support/terminal";

const INSTANCE_TYPE = "pulumi-nodejs:dynamic/gpucloud:Instance";
const CLEAR_SCREEN = "\x1b[2J\x1b[H";
/**
 * How long the evaluator's create call is held at the emulator: far longer than any kill of the provider
 * under load, so the hold never ends within the test and the emulator never carries the create out. The
 * emulator's hold timer is unref'd and its close force-closes connections, so the hold delays neither.
 */
const HELD_MS = 600_000;
const CLI = path.join(REPO_ROOT, "dist", "provider", "orphans-cli.js");

/** One resource as `pulumi stack export` writes it; the SSH passwords as the ciphertext the engine stores. */
function exported(h: Harness, name: string, state: ResourceState, provider: string): Props {
  return {
    urn: h.urn("Instance", name),
    custom: true,
    id: state.id,
    type: INSTANCE_TYPE,
    inputs: { ...state.inputs, __provider: provider },
    outputs: {
      ...state.outputs,
      __provider: provider,
      sshPasswords: {
        "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
        ciphertext: "v1:x",
      },
    },
  };
}

function stackExport(resources: Props[], pending: { urn: string; inputs: Props }[]): StackExport {
  return {
    deployment: {
      resources,
      pending_operations: pending.map((p) => ({
        resource: { urn: p.urn, custom: true, type: INSTANCE_TYPE, inputs: p.inputs },
        type: "creating",
      })),
    },
  } as StackExport;
}

function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  stdin = "",
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, ...args], { env }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(stdin);
  });
}

async function until(what: string, condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("a provider killed in the middle of a fleet create", () => {
  let w: World;
  beforeAll(async () => (w = await startWorld({ emulator: FAULT_EMULATOR })));
  afterAll(() => w.stop());

  it("leaves an instance no stack knows, and gpucloud-orphans lists exactly it", async () => {
    const started = performance.now();
    const provider = (await providerTexts()).Instance;
    const fleet = await gpucloudHarness({ config: providerConfig(w.emu.url) });
    const names = ["web-0", "web-1", "web-2", "trainer", "evaluator"];
    const inputs = await Promise.all(
      names.map((name, i) =>
        fleet.checked("Instance", { ...w.spec, title: name, gpuNums: [1, 1, 1, 2, 4][i] }),
      ),
    );
    const done = await w.advancing(
      Promise.all(inputs.slice(0, 3).map((news) => fleet.create("Instance", news))),
    );

    // Kill the provider once the trainer's create call was answered (it now waits, with the clock frozen,
    // for the instance to run) while the evaluator's create call is still held, unread. The trainer's create
    // is started alone and answered before the hold is armed, so which create gets held does not depend on
    // which of two concurrent calls reaches the emulator first.
    const createCalls = () => w.emulator.log.list().filter((r) => r.path === "/instance/create_by_pod");
    const before = createCalls().length;
    const trainer = fleet.create("Instance", inputs[3]).catch((err: Error) => err);
    await until("the trainer's create answered", () => {
      const calls = createCalls().slice(before);
      return calls.length === 1 && calls[0].status === 200;
    });
    w.emulator.faults.add({ path: "/instance/create_by_pod", kind: "delay", count: 1, ms: HELD_MS });
    const evaluator = fleet.create("Instance", inputs[4]).catch((err: Error) => err);
    await until("the evaluator's create held", () => {
      const calls = createCalls().slice(before);
      return calls.length === 2 && calls[1].status === null;
    });
    await fleet.stop();
    expect((await Promise.all([trainer, evaluator])).every((r) => r instanceof Error)).toBe(true);
    // The held call is still held (its hold outlasts the test), so it never reached the handler.
    expect(createCalls().slice(before)[1].status).toBeNull();
    expect(w.cloudInstances()).toHaveLength(4);

    const stack = stackExport(
      done.map((state, i) => exported(fleet, names[i], state, provider)),
      names.slice(3).map((name, i) => ({ urn: fleet.urn("Instance", name), inputs: inputs[3 + i] })),
    );
    const orphan = w.cloudInstances().find((id) => !done.some((s) => s.id === id))!;

    const cloud = [];
    for await (const i of w.api.instances.listAll()) cloud.push(i);
    const report = findOrphans(cloud, [stack]);
    expect(report.orphans).toEqual([
      expect.objectContaining({
        instanceUuid: orphan,
        gpuNums: 2,
        pendingCreates: [fleet.urn("Instance", "trainer")],
      }),
    ]);
    expect(formatReport(report)).toContain(orphan);

    // The CLI on the same scenario: two stacks' exports as files, or one export on stdin.
    const dir = mkdtempSync(path.join(tmpdir(), "gpucloud-orphans-"));
    const file = path.join(dir, "stack.json");
    writeFileSync(file, JSON.stringify({ version: 3, ...stack }));
    const other = path.join(dir, "other.json");
    writeFileSync(other, JSON.stringify(stackExport([], [])));
    const env = { PATH: process.env.PATH, GPUCLOUD_BASE_URL: w.emu.url, GPUCLOUD_API_KEY: DEMO_KEY };
    const json = await runCli(["--json", file, other], env);
    expect(json.code).toBe(3);
    const parsed = JSON.parse(json.stdout);
    expect(parsed.orphans.map((o: { instanceUuid: string }) => o.instanceUuid)).toEqual([orphan]);
    const piped = await runCli(["--json"], env, JSON.stringify(stack));
    expect(JSON.parse(piped.stdout).orphans).toEqual(parsed.orphans);
    const table = await runCli([file], env);
    expect(table.stdout).toMatch(new RegExp(`${orphan}.*pending create of .*trainer`));
    expect(table.stdout + table.stderr).not.toContain(DEMO_KEY);

    // Adopting it makes the stack whole again: the finder then finds nothing and exits 0.
    const adopted = await w.advancing(
      w.h.create("Instance", await w.h.checked("Instance", { ...inputs[3], adoptInstanceUuid: orphan })),
    );
    writeFileSync(
      file,
      JSON.stringify(
        stackExport(
          [...done, adopted].map((state, i) => exported(fleet, names[i], state, provider)),
          [],
        ),
      ),
    );
    const clean = await runCli([file], env);
    expect({ code: clean.code, stdout: clean.stdout }).toEqual({
      code: 0,
      stdout: expect.stringContaining("No orphaned instances"),
    });
    const bad = await runCli([other, path.join(dir, "missing.json")], env);
    expect({ code: bad.code, stderr: bad.stderr }).toEqual({
      code: 1,
      stderr: expect.stringContaining("Could not read"),
    });

    reportFigure(
      "faults",
      `faults[3 provider killed mid-create]: fleet=${names.length} stored=${done.length} pending-creates=${report.pendingCreates.length} ` +
        `cloud=${report.cloud} orphans-listed=${report.orphans.length} (flagged pending=${report.orphans[0].pendingCreates.length}) ` +
        `cli-exit=${json.code} after-adopt-exit=${clean.code} in ${seconds(performance.now() - started)}`,
    );
  });
});

describe("gpucloud-orphans on a cloud whose titles hold control characters", () => {
  let emu: TestEmulator;
  beforeAll(async () => (emu = await startTestEmulator()));
  afterAll(() => emu.close());

  it("prints the table and the JSON with them escaped, the JSON still the cloud's title", async () => {
    const title = `${CLEAR_SCREEN}No orphans.\u009b2J`;
    const created = await emu.api("POST", "/instance/create_by_pod", {
      body: {
        pod_uuid: (await pod(emu, "ComfyUI")).uuid,
        gpu_uuid: await gpuUuid(emu, "4090D"),
        gpu_nums: 1,
      },
    });
    const uuid = created.body.data.instance_uuid as string;
    await emu.api("POST", "/instance/update_title", { body: { instance_uuid: uuid, title } });
    const env = { PATH: process.env.PATH, GPUCLOUD_BASE_URL: emu.url, GPUCLOUD_API_KEY: DEMO_KEY };
    const none = JSON.stringify({ deployment: { resources: [] } });

    const table = await runCli([], env, none);
    expect(table.code).toBe(3);
    expect(terminalControls(table.stdout)).toEqual([]);
    expect(table.stdout).toContain("\\x1b[2J\\x1b[HNo orphans.\\x9b2J");
    const json = await runCli(["--json"], env, none);
    expect(terminalControls(json.stdout)).toEqual([]);
    expect(JSON.parse(json.stdout).orphans).toEqual([expect.objectContaining({ instanceUuid: uuid, title })]);
  });
});

describe("findOrphans", () => {
  const cloud = (uuid: string, extra: Record<string, unknown> = {}) =>
    ({ instance_uuid: uuid, status: 2, gpu_uuid: "g", gpu_nums: 1, ...extra }) as never;
  const resource = (id: string, extra: Props = {}) => ({
    urn: `urn:pulumi:a::p::${INSTANCE_TYPE}::${id}`,
    type: INSTANCE_TYPE,
    id,
    ...extra,
  });

  it("counts an instance held by any of several stacks, by id, instanceUuid output or adoptInstanceUuid", () => {
    const report = findOrphans(
      [cloud("i-1"), cloud("i-2"), cloud("i-3"), cloud("i-4")],
      [
        { deployment: { resources: [resource("i-1")] } },
        {
          deployment: {
            resources: [
              resource("", { outputs: { instanceUuid: "i-2" } }),
              resource("x", { inputs: { adoptInstanceUuid: "i-3" } }),
            ],
          },
        },
      ],
    );
    expect(report.orphans.map((o) => o.instanceUuid)).toEqual(["i-4"]);
  });

  it("ignores other resource types and flags only the pending creates an instance could come from", () => {
    const pending = (name: string, inputs: Props) => ({
      type: "creating",
      resource: { urn: `urn:pulumi:prod::p::${INSTANCE_TYPE}::${name}`, type: INSTANCE_TYPE, inputs },
    });
    const report = findOrphans(
      [cloud("i-1", { title: "web" }), cloud("i-2", { gpu_nums: 8 })],
      [
        {
          deployment: {
            resources: [{ type: "pulumi-nodejs:dynamic/gpucloud:IdleClosePolicy", id: "i-1" }],
            pending_operations: [
              pending("web", { gpuUuid: "g", gpuNums: 1, title: "web" }),
              pending("db", { gpuUuid: "g", gpuNums: 1, title: "db" }),
            ],
          },
        },
      ],
    );
    expect(report.pendingCreates.map((p) => p.stack)).toEqual(["prod", "prod"]);
    expect(
      report.orphans.map((o) => [o.instanceUuid, o.pendingCreates.map((u) => u.split("::").pop())]),
    ).toEqual([
      ["i-1", ["web"]],
      ["i-2", []],
    ]);
  });

  it("knows the instances and pending creates of a stack run through the native plugin", () => {
    const NATIVE_TYPE = "gpucloud:index:Instance";
    const report = findOrphans(
      [cloud("i-1"), cloud("i-2", { title: "web" }), cloud("i-3", { gpu_nums: 8 })],
      [
        {
          deployment: {
            resources: [{ urn: `urn:pulumi:a::p::${NATIVE_TYPE}::one`, type: NATIVE_TYPE, id: "i-1" }],
            pending_operations: [
              {
                type: "creating",
                resource: {
                  urn: `urn:pulumi:a::p::${NATIVE_TYPE}::web`,
                  type: NATIVE_TYPE,
                  inputs: { gpuUuid: "g", gpuNums: 1, title: "web" },
                },
              },
            ],
          },
        },
      ],
    );
    expect(report.pendingCreates.map((p) => p.urn)).toEqual([`urn:pulumi:a::p::${NATIVE_TYPE}::web`]);
    expect(report.orphans.map((o) => [o.instanceUuid, o.pendingCreates.length])).toEqual([
      ["i-2", 1],
      ["i-3", 0],
    ]);
  });

  it("reads a state file of pulumi-gpucloud/testing, whose secrets stay sealed", () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), "gpucloud-orphans-")), "stack.json");
    const record = (name: string, id: string, outputs: Props) => ({
      urn: `urn:pulumi:test::fleet::${INSTANCE_TYPE}::${name}`,
      type: INSTANCE_TYPE,
      name,
      id,
      inputs: { gpuUuid: "g", gpuNums: 1 },
      outputs,
      secretOutputs: ["sshPasswords"],
      dependencies: [],
    });
    const store = new FileStore(file, "passphrase");
    store.load("fleet", "test");
    store.save({
      project: "fleet",
      stack: "test",
      resources: [
        record("a", "i-1", { instanceUuid: "i-1", sshPasswords: secret({ SSH: "hunter2" }) }),
        // A create whose outcome stayed unknown, as the provider records it (id pending-create:...).
        record("b", "pending-create:1700000000:0123abcd", {
          pendingCreate: { candidates: [{ instanceUuid: "i-3", createTime: 1_700_000_001 }] },
        }),
      ],
      outputs: {},
      secretOutputs: [],
    });
    const text = readFileSync(file, "utf8");
    const listed = [cloud("i-1"), cloud("i-2", { gpu_nums: 8 }), cloud("i-3", { gpu_nums: 8 })];
    const report = findOrphans(listed, [asStackExport(JSON.parse(text), file)]);
    expect(report.known).toBe(1);
    expect(report.pendingCreates).toEqual([
      expect.objectContaining({
        urn: `urn:pulumi:test::fleet::${INSTANCE_TYPE}::b`,
        recorded: true,
        candidates: ["i-3"],
      }),
    ]);
    expect(report.orphans.map((o) => [o.instanceUuid, o.recordedBy.length])).toEqual([
      ["i-2", 0],
      ["i-3", 1],
    ]);
    const shown = formatReport(report);
    expect(shown).toMatch(
      /i-3 .*recorded pending create of urn:pulumi:test::fleet::.*::b: resolved by its stack's next up/,
    );
    expect(shown).toContain("Leave a recorded pending create's instance alone");
    expect(text + JSON.stringify(report)).not.toContain("hunter2");
  });

  it("says what the provider says when several instances could be one recorded pending create", () => {
    const recorded = {
      urn: `urn:pulumi:test::fleet::${INSTANCE_TYPE}::b`,
      type: INSTANCE_TYPE,
      id: "pending-create:1700000000:0123abcd",
      inputs: { gpuUuid: "g", gpuNums: 1 },
      outputs: { pendingCreate: { candidates: [{ instanceUuid: "i-2" }, { instanceUuid: "i-3" }] } },
    };
    const report = findOrphans([cloud("i-2"), cloud("i-3")], [{ deployment: { resources: [recorded] } }]);
    const shown = formatReport(report);
    expect(shown).toMatch(
      /i-2 .*one of several instances the recorded pending create of .*::b could have made/,
    );
    expect(shown).toMatch(/i-3 .*one of several instances/);
    expect(shown).toContain("title or destroy those that are not that");
    // Not the advice for a record its stack resolves alone, nor for the engine's own pending create.
    expect(shown).not.toContain("Leave a recorded pending create's instance alone");
    expect(shown).not.toContain("--clear-pending-creates");
  });

  it("shows a title written to fool a terminal escaped: it cannot erase the table or forge a line", () => {
    const title = `${CLEAR_SCREEN}No orphans.\n\u202e`;
    const shown = formatReport(findOrphans([cloud("i-1", { title, gpu_name: "4090D\x07" })], []));
    expect(terminalControls(shown)).toEqual([]);
    expect(shown).toMatch(
      /^i-1 +2 +1 x 4090D\\x07 +\\x1b\[2J\\x1b\[HNo orphans\.\\n\\u202e +- +no stack knows it$/m,
    );
    expect(shown.split("\n")[0]).toBe("1 of the 1 instances in the cloud are held by no stack:");
  });

  it("refuses what is not a stack export, saying what to pass", () => {
    expect(() => asStackExport({ resources: [] }, "state.json")).toThrow(
      /state.json is neither the output of `pulumi stack export` \(it has no "deployment" object\) nor a state file of pulumi-gpucloud\/testing/,
    );
  });
});
