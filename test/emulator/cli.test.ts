import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { createInterface } from "node:readline";
import ts from "typescript";
import { refusal, startFromArguments } from "../../emulator/cli";
import { terminalControls } from "../support/terminal";

const ROOT = join(__dirname, "..", "..");

/** Transpiles emulator/ into a temporary folder so the CLI runs from the current sources, built or not. */
function transpileEmulator(): string {
  const out = mkdtempSync(join(tmpdir(), "gpucloud-cli-"));
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? walk(path) : path.endsWith(".ts") ? [path] : [];
    });
  for (const file of walk(join(ROOT, "emulator"))) {
    const { outputText } = ts.transpileModule(readFileSync(file, "utf8"), {
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
      },
    });
    const target = join(out, relative(ROOT, file)).replace(/\.ts$/, ".js");
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, outputText);
  }
  return out;
}

function runCli(out: string, args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, [join(out, "emulator", "cli.js"), ...args], {
    env: { ...process.env, NODE_PATH: join(ROOT, "node_modules"), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", (line) => {
      lines.close();
      resolve(line);
    });
    child.once("exit", (code) => reject(new Error(`exited with ${code} before printing`)));
  });
}

function exitCode(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

/** Runs the CLI to its end and returns what it printed. */
async function runToEnd(
  out: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = runCli(out, args);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk) => (stdout += chunk));
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const code = await exitCode(child);
  return { code, stdout, stderr };
}

/** Flags the CLI refuses, and what its one line says. */
const REFUSALS: [string[], string][] = [
  [["--port", "seventy"], "--port: 'seventy' is not a number"],
  [["--port", "70000"], "--port: must be at most 65535"],
  [["--balance=-5"], "--balance: must be a decimal number of at least 0"],
  [["--time-scale=-1"], "--time-scale: must be at least 0"],
  [["--time-scale", "-1"], "--time-scale"],
  [["--rate-limit", "1.5"], "--rate-limit: must be an integer"],
  [["--latency", "/instance/create_by_podd=5"], "--latency: /instance/create_by_podd is not an API path"],
  [["--latency", "/instance/list=fast"], "--latency: '/instance/list=fast' is not NAME=N"],
  [["--latency", "default=700000"], "--latency: default: must be at most 600000"],
  [["--durations", "boot=60,warp=3"], "--durations: warp is not a duration"],
  [["--durations", "boot=-1"], "--durations: 'boot=-1' is not NAME=N"],
  [["--durations", "boot=1,boot=2"], "--durations: boot is given twice"],
  [["--durations", "__proto__=5"], "--durations: __proto__ is not a duration"],
  [["--latency", "__proto__=5"], "--latency: __proto__ is not an API path"],
  [["--utilization", "120"], "--utilization: gpu: must be at most 100"],
  [["--utilization", "10,20,30"], "--utilization: '10,20,30' is not GPU or GPU,FB"],
  [["--request-timeout", "0"], "--request-timeout: must be at least 1"],
  [["--max-connections", "many"], "--max-connections: 'many' is not a number"],
  [["--api-key", "bad key"], "--api-key: [0]: must be KEY or USER:KEY"],
  [["--admin-key", "short"], "--admin-key (or GPUCLOUD_EMULATOR_ADMIN_KEY): must be at least 16 characters"],
  [["--allowed-host", "http://x.example/"], "--allowed-host: [0]: must be a host name"],
  [["--seed", "/nonexistent/seed.json"], "seed file /nonexistent/seed.json cannot be read (ENOENT)"],
  [
    ["--gpu-stock", "4090D=x"],
    "--gpu-stock: '4090D=x' is not MODEL=CARDS, MODEL=~PROBABILITY or MODEL=CARDS~PROBABILITY",
  ],
  [["--gpu-stock", "4090D="], "--gpu-stock: '4090D=' is not MODEL=CARDS"],
  [["--gpu-stock", "=3"], "--gpu-stock: '=3' is not MODEL=CARDS"],
  [["--gpu-stock", "4090D=1,4090D=2"], "--gpu-stock: 4090D is given twice"],
  [
    ["--gpu-stock", "4090X=1"],
    "--gpu-stock: 4090X is no GPU model of the catalogue (4080, 4090D, 5090, 3090)",
  ],
  [["--gpu-stock", "5090=~1.5"], "--gpu-stock: 5090.refuse_probability: must be at most 1"],
  [["--gpu-stock", "__proto__=1"], "--gpu-stock: __proto__ is no GPU model of the catalogue"],
];

/** What the CLI would print on its one stderr line for `args`, found in this process. */
async function refusalOf(args: string[]): Promise<string> {
  const line = await startFromArguments(["--port", "0", ...args]).then(
    async (running) => {
      if (running !== "help") await running.close();
      return undefined;
    },
    (error: unknown) => refusal(error),
  );
  if (line === undefined) throw new Error(`${JSON.stringify(args)} was not refused`);
  return line;
}

// One transpiled copy for the whole file: transpiling the emulator takes seconds.
let out: string;
beforeAll(() => {
  out = transpileEmulator();
});
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("gpucloud-emulator CLI", () => {
  it("prints the listening line first, serves the API with the given key, and exits cleanly on SIGTERM", async () => {
    const child = runCli(out, [
      "--port",
      "0",
      "--time-scale",
      "0",
      "--api-key",
      "team:cli-key",
      "--balance",
      "42.5",
    ]);
    const line = await firstLine(child);
    const match = /^gpucloud emulator listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(line);
    expect(match).not.toBeNull();
    const response = await fetch(`${match![1]}/api/open/v2/balance/info`, {
      headers: { authorization: "Bearer cli-key" },
    });
    expect(await response.json()).toEqual({
      code: 0,
      msg: "success",
      data: { balance: 42.5, card_balance: 0 },
    });
    const exited = exitCode(child);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("asks for the admin key given in GPUCLOUD_EMULATOR_ADMIN_KEY, out of sight of the process list", async () => {
    const adminKey = "cli-admin-key-5e0d7a91";
    const child = runCli(out, ["--port", "0"], { GPUCLOUD_EMULATOR_ADMIN_KEY: adminKey });
    const url = (await firstLine(child)).replace("gpucloud emulator listening on ", "");
    expect((await fetch(`${url}/_emulator/clock`)).status).toBe(401);
    const signed = await fetch(`${url}/_emulator/clock`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    expect(signed.status).toBe(200);
    const exited = exitCode(child);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("exits cleanly on SIGINT", async () => {
    const child = runCli(out, ["--port", "0"]);
    await firstLine(child);
    const exited = exitCode(child);
    child.kill("SIGINT");
    expect(await exited).toBe(0);
  });

  it("starts with --gpu-stock's free cards and refusal probabilities, and refuses a create beyond them", async () => {
    const child = runCli(out, ["--port", "0", "--gpu-stock", "4090D=1,5090=~0.25,4080=2~0.5"]);
    const url = (await firstLine(child)).replace("gpucloud emulator listening on ", "");
    try {
      const { gpus } = (await (await fetch(`${url}/_emulator/gpus`)).json()) as {
        gpus: { gpu_name: string; gpu_uuid: string; free: number | null; refuse_probability: number }[];
      };
      const stock = Object.fromEntries(gpus.map((g) => [g.gpu_name, [g.free, g.refuse_probability]]));
      expect(stock).toEqual({ "4080": [2, 0.5], "4090D": [1, 0], "5090": [null, 0.25], "3090": [null, 0] });
      const pods = (await (await fetch(`${url}/api/open/v2/pod/list`)).json()) as {
        data: { pod_list: { uuid: string }[] };
      };
      const create = () =>
        fetch(`${url}/api/open/v2/instance/create_by_pod`, {
          method: "POST",
          headers: { authorization: "Bearer demo-key", "content-type": "application/json" },
          body: JSON.stringify({
            pod_uuid: pods.data.pod_list[0].uuid,
            gpu_uuid: gpus.find((g) => g.gpu_name === "4090D")!.gpu_uuid,
            gpu_nums: 1,
          }),
        }).then((answer) => answer.json());
      expect(await create()).toMatchObject({ code: 0 });
      expect(await create()).toEqual({
        code: 1,
        msg: "no free 4090D cards: 1 asked, 0 free; try another GPU model, fewer cards or later",
      });
    } finally {
      const exited = exitCode(child);
      child.kill("SIGTERM");
      await exited;
    }
  });

  it("prints help with every option", async () => {
    const child = runCli(out, ["--help"]);
    let text = "";
    child.stdout!.on("data", (chunk) => (text += chunk));
    expect(await exitCode(child)).toBe(0);
    for (const option of [
      "--host",
      "--port",
      "--allowed-host",
      "--admin-key",
      "--api-key",
      "--balance",
      "--time-scale",
      "--rate-limit",
      "--state",
      "--seed",
      "--durations",
      "--latency",
      "--utilization",
      "--request-timeout",
      "--max-connections",
      "--error-status",
      "--gpu-stock",
      "--help",
    ]) {
      expect(text).toContain(option);
    }
  });

  it("prints the help docs/emulator.md shows, so the page lists every option", async () => {
    const { stdout } = await runToEnd(out, ["--help"]);
    const page = readFileSync(join(ROOT, "docs", "emulator.md"), "utf8");
    const shown = /npm run emulator -- --help\n```\n\n```\n([\s\S]*?)```/.exec(page);
    expect(shown?.[1]).toBe(stdout);
  });

  it.each(REFUSALS)(
    "refuses %j with one line naming the option, before anything listens",
    async (args, message) => {
      const line = await refusalOf(args);
      expect(line).not.toContain("\n");
      expect(line).toContain(message);
    },
  );

  // The refusals above, as the command prints them: one of each kind (a flag read wrong, an option the
  // emulator refuses, a file it cannot read) run as the process users start.
  it.each(["--port", "--balance=-5", "--seed"].map((flag) => REFUSALS.find(([args]) => args[0] === flag)!))(
    "as a process, refuses %j with that line alone on stderr, exit code 2 and no banner",
    async (args, message) => {
      const { code, stdout, stderr } = await runToEnd(out, ["--port", "0", ...args]);
      expect(code).toBe(2);
      expect(stdout).toBe("");
      expect(stderr).toBe(`gpucloud-emulator: ${await refusalOf(args)}\n`);
      expect(stderr).toContain(message);
    },
  );

  it("prints what it quotes of a seed file escaped, on one line: the file cannot clear the screen or forge a line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gpucloud-cli-seed-"));
    try {
      const seed = join(dir, "seed.json");
      writeFileSync(seed, JSON.stringify({ "\x1b[2J\x1b[Hlistening on http://evil\n\u202egpus": [] }));
      const { code, stderr } = await runToEnd(out, ["--port", "0", "--seed", seed]);
      expect(code).toBe(2);
      expect(stderr).toBe(
        `gpucloud-emulator: seed file ${seed} is refused: has an unknown field: ` +
          "\\x1b[2J\\x1b[Hlistening on http://evil \\u202egpus\n",
      );
      expect(terminalControls(stderr)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("gpucloud-emulator --state", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "gpucloud-cli-state-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const start = async (args: string[]) => {
    const child = runCli(out, ["--port", "0", "--time-scale", "0", ...args]);
    let stderr = "";
    child.stderr!.on("data", (chunk) => (stderr += chunk));
    /** Resolves once stderr holds `text`: the CLI prints its notices just after the listening line. */
    const printed = (text: string) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (!stderr.includes(text)) return;
          child.stderr!.off("data", check);
          resolve();
        };
        child.stderr!.on("data", check);
        check();
      });
    const url = /listening on (\S+)$/.exec(await firstLine(child))![1];
    const stop = async () => {
      const exited = exitCode(child);
      child.kill("SIGTERM");
      await exited;
    };
    return { url, stop, stderr: () => stderr, printed, child };
  };
  const balanceOf = async (url: string, key: string) => {
    const res = await fetch(`${url}/api/open/v2/balance/info`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return ((await res.json()) as { data?: { balance: number } }).data?.balance;
  };

  it.each([
    [
      "another version",
      JSON.stringify({ version: 2, now: 1, keys: [], wallet: {}, rooms: {} }),
      "version: is 2",
    ],
    ["a now that is not a number", JSON.stringify({ version: 1, now: "abc" }), "now: must be a number"],
    ["{}", "{}", "version: is required"],
    ["truncated JSON", '{"version": 1, "now": 17', "is not valid JSON"],
    ["an empty file", "", "is empty"],
    [
      "a wrong shape inside a room",
      JSON.stringify({
        version: 1,
        now: 1_800_000_000,
        keys: [{ key: "k", user: "u", disabled: false }],
        wallet: { balances: { u: "1.00000000" }, reservations: [], bills: {} },
        rooms: { instances: [{ instance_uuid: "ins-1", status: "running" }] },
      }),
      "rooms.instances[0].owner: is required",
    ],
  ])("refuses a state file with %s, names it, and leaves it as it was", async (_what, text, problem) => {
    const file = join(dir, `bad-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, text);
    const line = await refusalOf(["--state", file]);
    expect(line).not.toContain("\n");
    expect(line).toContain(`state file ${file}`);
    expect(line).toContain(problem);
    expect(readFileSync(file, "utf8")).toBe(text);
  });

  it("as a process, refuses a state file it cannot read with that line alone on stderr, exit code 2", async () => {
    const file = join(dir, "truncated.json");
    writeFileSync(file, '{"version": 1, "now": 17');
    const { code, stdout, stderr } = await runToEnd(out, ["--port", "0", "--state", file]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toBe(`gpucloud-emulator: ${await refusalOf(["--state", file])}\n`);
    expect(stderr).toContain("is not valid JSON");
    expect(readFileSync(file, "utf8")).toBe('{"version": 1, "now": 17');
  });

  it("refuses a second emulator on a state file in use, naming the first's pid; takes over after a SIGKILL, saying so", async () => {
    const file = join(dir, "shared.json");
    const first = await start(["--state", file]);
    const second = await runToEnd(out, ["--port", "0", "--state", file]);
    expect(second.code).toBe(2);
    expect(second.stdout).toBe("");
    expect(second.stderr).toContain(
      `state file ${file} is in use by the emulator with pid ${first.child.pid} on `,
    );
    const killed = exitCode(first.child);
    first.child.kill("SIGKILL");
    await killed;

    const third = await start(["--state", file]);
    try {
      await third.printed(`took over ${file}.lock`);
      expect(third.stderr()).toBe(
        `gpucloud-emulator: took over ${file}.lock, left by an emulator that no longer runs\n`,
      );
    } finally {
      await third.stop();
    }
    expect(readdirSync(dir).filter((name) => name.startsWith("shared.json"))).toEqual(["shared.json"]);
  });

  it("lets exactly one of two emulators started at once have a state file, fresh or after its holder's SIGKILL", async () => {
    const file = join(dir, "raced.json");
    for (const round of ["fresh", "after a SIGKILL"]) {
      const racers = [
        runCli(out, ["--port", "0", "--state", file]),
        runCli(out, ["--port", "0", "--state", file]),
      ];
      const outcomes = await Promise.all(
        racers.map(async (child) => {
          let stderr = "";
          child.stderr!.on("data", (chunk) => (stderr += chunk));
          const exited = exitCode(child);
          const started = await firstLine(child).then(
            () => true,
            () => false,
          );
          return { child, started, exited, stderr: () => stderr };
        }),
      );
      const winners = outcomes.filter((o) => o.started);
      expect([round, winners.length]).toEqual([round, 1]);
      const loser = outcomes.find((o) => !o.started)!;
      expect(await loser.exited).toBe(2);
      expect(loser.stderr()).toContain(
        `state file ${file} is in use by the emulator with pid ${winners[0].child.pid} on `,
      );
      winners[0].child.kill("SIGKILL");
      await winners[0].exited;
    }
  });

  it("accepts --api-key keys besides the saved ones and opens new users with --balance, saying so", async () => {
    const file = join(dir, "keys.json");
    const first = await start(["--state", file, "--api-key", "team:old-key", "--balance", "40"]);
    expect(await balanceOf(first.url, "old-key")).toBe(40);
    await first.stop();

    const second = await start([
      "--state",
      file,
      "--api-key",
      "team:new-key",
      "--api-key",
      "solo:solo-key",
      "--balance",
      "7",
    ]);
    try {
      expect(await balanceOf(second.url, "old-key")).toBe(40);
      expect(await balanceOf(second.url, "new-key")).toBe(40);
      expect(await balanceOf(second.url, "solo-key")).toBe(7);
      await second.printed("--balance 7 is the starting balance of users new to");
    } finally {
      await second.stop();
    }
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const moved = await runToEnd(out, ["--port", "0", "--state", file, "--api-key", "other:old-key"]);
    expect(moved.code).toBe(2);
    expect(moved.stderr).toContain("--api-key: API key key_");
    expect(moved.stderr).toContain("belongs to user team");
  });

  it("refuses an --error-status it does not know, naming the allowed modes", async () => {
    const child = runCli(out, ["--port", "0", "--error-status", "quiet"]);
    let text = "";
    child.stderr!.on("data", (chunk) => (text += chunk));
    expect(await exitCode(child)).toBe(2);
    expect(text).toContain('--error-status: must be one of envelope, http, got "quiet"');
  });
});
