#!/usr/bin/env node
import { parseArgs } from "node:util";
import { errorStatusMode } from "./core/envelope";
import { startEmulator } from "./index";

const HELP = `Usage: gpucloud-emulator [options]

A local emulator of the GPU cloud's open API v2 (base http://HOST:PORT/api/open/v2).

Options:
  --host HOST            bind address (default 127.0.0.1)
  --port N               port, 0 picks a free one (default 8787)
  --api-key KEY          an accepted key (repeatable; default demo-key). USER:KEY makes keys of one USER
                         share resources; a bare KEY is its own user, named by the key's fingerprint
  --balance CNY          starting balance of every user (default 1000)
  --time-scale N         simulated seconds per real second; 0 freezes the clock (default 1)
  --rate-limit N         requests per second per key, 0 is off (default 0)
  --state FILE           load state from FILE at start and save it after every change
  --error-status MODE    http (default): failures answer 4xx/5xx; envelope: business failures answer
                         HTTP 200 with the envelope code, as clients of the live service expect
  --help                 show this help
`;

function numberOption(
  name: string,
  value: string | undefined,
  fallback: number,
  check: (n: number) => boolean,
): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (value.trim() === "" || !Number.isFinite(parsed) || !check(parsed)) {
    throw new Error(`--${name}: '${value}' is not valid; see --help`);
  }
  return parsed;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      host: { type: "string", default: "127.0.0.1" },
      port: { type: "string" },
      "api-key": { type: "string", multiple: true },
      balance: { type: "string" },
      "time-scale": { type: "string" },
      "rate-limit": { type: "string" },
      state: { type: "string" },
      "error-status": { type: "string" },
      help: { type: "boolean", default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const starting = startEmulator({
    host: values.host,
    port: numberOption("port", values.port, 8787, (n) => Number.isInteger(n) && n >= 0 && n <= 65535),
    apiKeys: values["api-key"],
    balance: numberOption("balance", values.balance, 1000, (n) => n >= 0),
    timeScale: numberOption("time-scale", values["time-scale"], 1, (n) => n >= 0),
    rateLimit: numberOption("rate-limit", values["rate-limit"], 0, (n) => Number.isInteger(n) && n >= 0),
    stateFile: values.state,
    errorStatus: errorStatusMode(values["error-status"], "--error-status"),
  });
  // Handlers go in before the listening line: a supervisor may signal as soon as it reads that line.
  const stop = () => {
    starting
      .then((running) => running.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const running = await starting;
  process.stdout.write(`gpucloud emulator listening on ${running.url}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`gpucloud-emulator: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
});
