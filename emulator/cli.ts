#!/usr/bin/env node
/**
 * The `gpucloud-emulator` command: reads the flags into the emulator's options, starts it, prints the address
 * it listens on and stops it on a signal.
 */
import { parseArgs } from "node:util";
import { DURATION_NAMES } from "./core/durations";
import { errorStatusMode } from "./core/http/envelope";
import { OptionError } from "./core/options";
import { terminalText } from "./core/terminal-text";
import { startEmulator, type RunningEmulator } from "./index";
import type { EmulatorOptions, GpuStock } from "./core/emulator-options";

const HELP = `Usage: gpucloud-emulator [options]

A local emulator of the GPU cloud's open API v2 (base http://HOST:PORT/api/open/v2).

Options:
  --host HOST            bind address (default 127.0.0.1). Any other than loopback lets the network
                         reach the API, the admin API and the console: give --admin-key with it
  --allowed-host NAME    a host name the emulator answers to besides localhost, IP addresses and
                         --host (repeatable; .example.com allows a domain and its subdomains), e.g.
                         host.docker.internal. Requests naming any other Host are refused (DNS rebinding)
  --admin-key KEY        the admin API and the web console ask for KEY (16 characters or more):
                         'Authorization: Bearer KEY' for scripts, a sign-in form for the console. The
                         environment variable GPUCLOUD_EMULATOR_ADMIN_KEY does the same, out of sight
                         of other users' process lists
  --port N               port, 0 picks a free one (default 8787)
  --api-key KEY          an accepted key (repeatable; default demo-key). USER:KEY makes keys of one USER
                         share resources; a bare KEY is its own user, named by the key's fingerprint.
                         With a saved --state, the keys given are accepted besides the saved ones
  --balance CNY          starting balance of every user (default 1000); with a saved --state, of
                         users new to it (saved balances are kept)
  --time-scale N         simulated seconds per real second; 0 freezes the clock (default 1)
  --rate-limit N         requests per second per API key (and per address for requests without an
                         accepted key); 0 is off (default 0)
  --state FILE           load state from FILE at start and save it after every change (mode 0600).
                         FILE.lock keeps a second emulator off FILE; a symbolic link is refused
  --seed FILE            start from this catalogue: JSON {"gpus", "pods", "market_images", "workflows",
                         "video_models"}, each a list replacing the built-in one
  --durations LIST       simulated seconds: boot=60,shutdown=10,startup=30,restart=20,save_image=120,
                         services=0 (services: how long after status 2 web services and SSH answer)
  --latency LIST         real added latency in ms per API path, e.g.
                         /instance/create_by_pod=1000,default=50
  --utilization GPU[,FB] the GPU (and memory, default the same) utilisation new instances report
                         (0-100, default 0), so idle policies do not stop a fresh fleet
  --request-timeout MS   a request must arrive whole within MS (default 60000); slower ones get 408
  --max-connections N    connections open at once (default 1024)
  --error-status MODE    envelope (default): business failures answer HTTP 200 with the envelope's
                         code, as the live service does; http: they answer 400/404 with the same
                         body. The key (401), rate limits (429) and 5xx keep their status in both
  --gpu-stock LIST       free GPU cards per model (gpu_name or gpu_uuid; others unlimited), e.g.
                         4090D=8,5090=0: a create or start needing more is refused (code 1).
                         MODEL=~P refuses one of that model with probability P although cards are
                         free, MODEL=N~P both. With a saved --state, sets those models' free cards now
  --help                 show this help
`;

const ADMIN_KEY_VARIABLE = "GPUCLOUD_EMULATOR_ADMIN_KEY";

/** The flag each programmatic option comes from, so errors name what the user typed. */
const FLAGS: Record<string, string> = {
  host: "--host",
  allowedHosts: "--allowed-host",
  adminKey: "--admin-key (or GPUCLOUD_EMULATOR_ADMIN_KEY)",
  port: "--port",
  apiKeys: "--api-key",
  balance: "--balance",
  timeScale: "--time-scale",
  rateLimit: "--rate-limit",
  stateFile: "--state",
  seedFile: "--seed",
  durations: "--durations",
  latency: "--latency",
  utilization: "--utilization",
  requestTimeoutMs: "--request-timeout",
  maxConnections: "--max-connections",
  errorStatus: "--error-status",
  gpuStock: "--gpu-stock",
};

function refuse(flag: string, rule: string): never {
  throw new Error(`${flag}: ${rule}; see --help`);
}

function number(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (value.trim() === "" || !Number.isFinite(parsed)) refuse(flag, `'${value}' is not a number`);
  return parsed;
}

/** `NAME=VALUE,...` pairs with integer values, for --durations and --latency. */
function pairs(flag: string, value: string, example: string): Record<string, number> {
  // A Map, then own properties: a NAME such as __proto__ must be refused by name, not swallowed.
  const parsed = new Map<string, number>();
  for (const item of value.split(",")) {
    const at = item.lastIndexOf("=");
    const name = item.slice(0, at).trim();
    const amount = item.slice(at + 1).trim();
    if (at <= 0 || !/^\d+$/.test(amount)) refuse(flag, `'${item}' is not NAME=N (e.g. ${example})`);
    if (parsed.has(name)) refuse(flag, `${name} is given twice`);
    parsed.set(name, Number(amount));
  }
  return Object.fromEntries(parsed);
}

function durations(value: string | undefined): EmulatorOptions["durations"] {
  if (value === undefined) return undefined;
  const given = pairs("--durations", value, "boot=60,services=90");
  for (const name of Object.keys(given)) {
    if (!(DURATION_NAMES as readonly string[]).includes(name)) {
      refuse("--durations", `${name} is not a duration (${DURATION_NAMES.join(", ")})`);
    }
  }
  return given;
}

function utilization(value: string | undefined): EmulatorOptions["utilization"] {
  if (value === undefined) return undefined;
  const parts = value.split(",");
  if (parts.length > 2) refuse("--utilization", `'${value}' is not GPU or GPU,FB`);
  const gpu = number("--utilization", parts[0]) as number;
  return { gpu, fb: parts.length === 2 ? (number("--utilization", parts[1]) as number) : gpu };
}

/** `MODEL=N`, `MODEL=~P` or `MODEL=N~P`, comma-separated: free cards, a refusal probability, or both. */
function gpuStock(value: string | undefined): EmulatorOptions["gpuStock"] {
  if (value === undefined) return undefined;
  // A Map, then own properties: a MODEL such as __proto__ must be refused by name, not swallowed.
  const parsed = new Map<string, GpuStock>();
  for (const item of value.split(",")) {
    const at = item.lastIndexOf("=");
    const name = item.slice(0, at).trim();
    const spec = /^(\d+)?(?:~(\d*\.?\d+))?$/.exec(item.slice(at + 1).trim());
    if (at <= 0 || spec === null || (spec[1] === undefined && spec[2] === undefined)) {
      refuse(
        "--gpu-stock",
        `'${item}' is not MODEL=CARDS, MODEL=~PROBABILITY or MODEL=CARDS~PROBABILITY (e.g. 4090D=8,5090=~0.3)`,
      );
    }
    if (parsed.has(name)) refuse("--gpu-stock", `${name} is given twice`);
    const free = spec[1] === undefined ? null : Number(spec[1]);
    parsed.set(name, spec[2] === undefined ? free : { free, refuse_probability: Number(spec[2]) });
  }
  return Object.fromEntries(parsed);
}

function optionsFrom(argv: string[]): EmulatorOptions | "help" {
  const { values } = parseArgs({
    args: argv,
    options: {
      host: { type: "string", default: "127.0.0.1" },
      "allowed-host": { type: "string", multiple: true },
      "admin-key": { type: "string" },
      port: { type: "string" },
      "api-key": { type: "string", multiple: true },
      balance: { type: "string" },
      "time-scale": { type: "string" },
      "rate-limit": { type: "string" },
      state: { type: "string" },
      seed: { type: "string" },
      durations: { type: "string" },
      latency: { type: "string" },
      utilization: { type: "string" },
      "request-timeout": { type: "string" },
      "max-connections": { type: "string" },
      "error-status": { type: "string" },
      "gpu-stock": { type: "string" },
      help: { type: "boolean", default: false },
    },
    strict: true,
  });
  if (values.help) return "help";
  return {
    host: values.host,
    allowedHosts: values["allowed-host"],
    adminKey: values["admin-key"] ?? adminKeyFromEnvironment(),
    port: number("--port", values.port) ?? 8787,
    apiKeys: values["api-key"],
    balance: values.balance,
    timeScale: number("--time-scale", values["time-scale"]),
    rateLimit: number("--rate-limit", values["rate-limit"]),
    stateFile: values.state,
    seedFile: values.seed,
    durations: durations(values.durations),
    latency:
      values.latency === undefined
        ? undefined
        : pairs("--latency", values.latency, "/instance/create_by_pod=1000,default=50"),
    utilization: utilization(values.utilization),
    requestTimeoutMs: number("--request-timeout", values["request-timeout"]),
    maxConnections: number("--max-connections", values["max-connections"]),
    errorStatus:
      values["error-status"] === undefined
        ? undefined
        : errorStatusMode(values["error-status"], "--error-status"),
    gpuStock: gpuStock(values["gpu-stock"]),
  };
}

/** The admin key from the environment: unlike a flag, it does not show in every user's process list. */
function adminKeyFromEnvironment(): string | undefined {
  const key = process.env[ADMIN_KEY_VARIABLE];
  return key === undefined || key === "" ? undefined : key;
}

/**
 * The emulator the flags `argv` describe, started; or "help" when they ask for it. Throws on flags it
 * refuses, before anything listens: `refusal` says why on one line.
 */
export async function startFromArguments(argv: string[]): Promise<RunningEmulator | "help"> {
  const options = optionsFrom(argv);
  return options === "help" ? "help" : startEmulator(options);
}

async function main(): Promise<void> {
  const starting = startFromArguments(process.argv.slice(2));
  // Handlers go in before the listening line: a supervisor may signal as soon as it reads that line.
  const stop = () => {
    starting
      .then((running) => (running === "help" ? undefined : running.close()))
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const running = await starting;
  // The signal handlers keep nothing alive: after the help, the process ends by itself.
  if (running === "help") return void process.stdout.write(HELP);
  process.stdout.write(`gpucloud emulator listening on ${running.url}\n`);
  for (const notice of running.emulator.notices)
    process.stderr.write(`gpucloud-emulator: ${terminalText(notice)}\n`);
}

/**
 * One line, no stack trace: every start failure is the user's to fix, and the message says how. It may
 * quote the user's files (a seed's unknown field), so what a terminal would act on is shown escaped.
 */
export function refusal(error: unknown): string {
  if (error instanceof OptionError)
    return terminalText(`${FLAGS[error.option] ?? error.option}: ${error.rule}; see --help`);
  return terminalText((error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, " "));
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`gpucloud-emulator: ${refusal(error)}\n`);
    process.exit(2);
  });
}
