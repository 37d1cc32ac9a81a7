/**
 * The emulator's options, in a module of their own so that the package's public types (emulator/index.ts)
 * name no fastify or zod types: a user's project compiles them without skipLibCheck or esModuleInterop.
 */
import type { Durations } from "./durations";

/**
 * How API failures are answered: `envelope` (the default), as the live service does and its public
 * clients expect, business failures with HTTP 200 and the envelope's non-zero code; `http` with their
 * HTTP status (400, 404) and the same body (`--error-status http`). The key (401), the rate limit
 * (429), the service's own failures (5xx) and transport answers keep their status in both.
 */
export type ErrorStatusMode = "http" | "envelope";

export interface EmulatorOptions {
  /**
   * The address to listen on; default 127.0.0.1. Any other than loopback makes the emulator reachable
   * from the network: `notices` then says what that exposes (give `adminKey`).
   */
  host?: string;
  /**
   * Host names the emulator answers to besides localhost, IP addresses and `host` (`--allowed-host`),
   * for those who reach it by another name (a docker service, a LAN name); `.example.com` allows the
   * domain and its subdomains. Any other Host is refused, so a web page cannot reach it by DNS rebinding.
   */
  allowedHosts?: string[];
  /**
   * When set (at least 16 characters), the admin API and the web console ask for it: scripts send
   * `Authorization: Bearer <adminKey>`, a person signs in to the console. API keys are not accepted there.
   */
  adminKey?: string;
  /** 0 picks a free port. */
  port?: number;
  /**
   * `KEY` or `USER:KEY`; default one key `demo-key`. With a state file that exists, these keys are
   * accepted besides the saved ones (new users open with `balance`); a saved key keeps its user.
   */
  apiKeys?: string[];
  /** Starting balance of every user in CNY; default 1000. With a saved state, of new users only. */
  balance?: number | string;
  /** Simulated seconds per real second; 0 freezes the clock (it then moves only on advance). */
  timeScale?: number;
  /** Requests per second per key; 0 (default) is off. */
  rateLimit?: number;
  /** Load state from this file at start and save it after every change. */
  stateFile?: string;
  /** Simulated start time in Unix seconds; default now. */
  startTime?: number;
  /** Real added latency in ms per API path relative to the API base; `default` for every other API path. */
  latency?: Record<string, number>;
  /** Simulated durations in seconds; each left out keeps its default (the CLI's `--durations`). */
  durations?: Partial<Durations>;
  /** A catalogue file replacing the built-in lists it names (the CLI's `--seed`). */
  seedFile?: string;
  /** The GPU and memory utilisation (0-100) every new instance's GPUs report; default 0. */
  utilization?: { gpu: number; fb: number };
  /** A request must arrive whole within this many ms (default 60 000); slower ones get 408. */
  requestTimeoutMs?: number;
  /** Connections open at once (default 1024); more are closed as they arrive. */
  maxConnections?: number;
  /** `envelope` (default) answers business failures with HTTP 200 and the envelope code; `http` with 4xx. */
  errorStatus?: ErrorStatusMode;
  /**
   * Free GPU cards per model, by gpu_name or gpu_uuid (`--gpu-stock`): `{ "4090D": 8, "5090": 0 }`; a
   * model left out has unlimited cards, as every model has by default. A create or start needing more
   * cards than are free is refused (code 1). The object form adds `refuse_probability`: a create or start
   * of that model is refused with that probability although cards are free (`free: null` for unlimited
   * cards otherwise), repeatable from run to run under `seed`. With a saved state, the models named here
   * get these free cards now; the others keep their saved stock.
   */
  gpuStock?: Record<string, GpuStock>;
}

/** One model's stock in the `gpuStock` option: its free cards (null for unlimited), or a whole setting. */
export type GpuStock = number | null | { free: number | null; refuse_probability?: number; seed?: number };
