import Fastify, { type FastifyInstance, type FastifyRequest } from "fastify";
import { AccountRoom } from "./account/routes";
import { AssetsRoom } from "./assets/routes";
import { CatalogueRoom } from "./catalogue/routes";
import { registerConsole } from "./console/routes";
import { registerAdminRoutes } from "./core/admin";
import { fingerprint, KeyRing } from "./core/auth";
import { SimClock } from "./core/clock";
import { errorStatusMode, installErrorHandling, type ErrorStatusMode } from "./core/envelope";
import { altError, notLoggedIn, rateLimited, systemError } from "./core/errors";
import { FaultTable } from "./core/faults";
import { newId } from "./core/ids";
import { StateFile } from "./core/persistence";
import { RateLimiter } from "./core/ratelimit";
import { type LoggedRequest, RequestLog } from "./core/requestlog";
import type { Room, RoomContext } from "./core/room";
import { Wallet } from "./core/wallet";
import { ImagesRoom } from "./images/routes";
import { InstancesRoom } from "./instances/routes";
import { ModelRunsRoom } from "./model-runs/routes";
import { WorkflowsRoom } from "./workflows/routes";

export const API_BASE = "/api/open/v2";
export const ADMIN_BASE = "/_emulator";
/** Bodies above this answer 413 (assets set their own, larger limit on their route). */
export const BODY_LIMIT = 1024 * 1024;
const TICK_MS = 250;

declare module "fastify" {
  interface FastifyRequest {
    user?: string;
    keyId?: string;
    logged?: LoggedRequest;
    dropAfterCommit?: boolean;
  }
  interface FastifyContextConfig {
    /** The route needs no API key (api-v2.md, Authentication 3). */
    public?: boolean;
  }
}

export interface EmulatorOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** `KEY` or `USER:KEY`; default one key `demo-key`. */
  apiKeys?: string[];
  /** Starting balance of every user in CNY; default 1000. */
  balance?: number | string;
  /** Simulated seconds per real second; 0 freezes the clock (it then moves only on advance). */
  timeScale?: number;
  /** Requests per second per key; 0 (default) is off. */
  rateLimit?: number;
  /** Load state from this file at start and save it after every change. */
  stateFile?: string;
  /** Simulated start time in Unix seconds; default now. */
  startTime?: number;
  /** `envelope` answers business failures with HTTP 200 and the envelope code; default `http`. */
  errorStatus?: ErrorStatusMode;
}

/** The whole emulator: shared core, the room list, the HTTP app and the real-time ticker. */
export class Emulator {
  readonly clock: SimClock;
  readonly keys = new KeyRing();
  readonly wallet: Wallet;
  readonly faults = new FaultTable();
  readonly log = new RequestLog();
  readonly rooms: Room[];
  readonly app: FastifyInstance;
  private readonly limiter: RateLimiter;
  private readonly stateFile?: StateFile;
  private ticker?: NodeJS.Timeout;

  constructor(private readonly options: EmulatorOptions = {}) {
    this.clock = new SimClock(options.startTime ?? Math.floor(Date.now() / 1000));
    this.wallet = new Wallet(() => this.clock.now(), newId);
    this.limiter = new RateLimiter(options.rateLimit ?? 0);
    const ctx: RoomContext = {
      clock: this.clock,
      currentUser: (request: FastifyRequest) => {
        if (request.user === undefined) throw notLoggedIn();
        return request.user;
      },
      currentKeyId: (request: FastifyRequest) => {
        if (request.keyId === undefined) throw notLoggedIn();
        return request.keyId;
      },
      wallet: this.wallet,
      ids: { next: newId },
      persist: () => this.persist(),
    };

    // The room list: adding an API area is one line here.
    const catalogue = new CatalogueRoom();
    const images = new ImagesRoom(ctx);
    const assets = new AssetsRoom(ctx);
    this.rooms = [
      catalogue,
      images,
      new InstancesRoom(ctx, catalogue.store, images.store),
      new AccountRoom(ctx),
      assets,
      new WorkflowsRoom(ctx, assets.store),
      new ModelRunsRoom(ctx, assets.store),
    ];

    if (options.stateFile !== undefined) this.stateFile = new StateFile(options.stateFile);
    const saved = this.stateFile?.load();
    if (saved === undefined) this.seed();
    else this.restore(saved);
    this.persist();
    this.app = this.buildApp();
  }

  /** Moves simulated time forward, running every transition due on the way, then saves. */
  advance(seconds: number): void {
    this.clock.advanceTo(this.clock.now() + seconds, this.rooms);
    this.persist();
  }

  /** Back to the seeded state: keys, balances and every room (POST /_emulator/reset). Time keeps going. */
  reset(): void {
    this.seed();
    this.persist();
  }

  persist(): void {
    this.stateFile?.save(this.snapshot());
  }

  async listen(): Promise<{ url: string; port: number }> {
    const host = this.options.host ?? "127.0.0.1";
    await this.app.listen({ host, port: this.options.port ?? 8787 });
    const address = this.app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : (this.options.port ?? 8787);
    this.startTicker();
    const shownHost = host.includes(":") ? `[${host}]` : host;
    return { url: `http://${shownHost}:${port}`, port };
  }

  async close(): Promise<void> {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
    await this.app.close();
  }

  private seed(): void {
    this.keys.seed(
      this.options.apiKeys && this.options.apiKeys.length > 0 ? this.options.apiKeys : ["demo-key"],
    );
    this.wallet.clear();
    for (const user of this.keys.users()) this.wallet.open(user, this.options.balance ?? 1000);
    for (const room of this.rooms) room.reset();
    this.faults.clear();
    this.log.clear();
    this.limiter.clear();
  }

  private snapshot(): unknown {
    return {
      version: 1,
      now: this.clock.now(),
      keys: this.keys.snapshot(),
      wallet: this.wallet.snapshot(),
      rooms: Object.fromEntries(this.rooms.map((room) => [room.name, room.snapshot()])),
    };
  }

  private restore(saved: unknown): void {
    const state = saved as { now: number; keys: unknown; wallet: unknown; rooms: Record<string, unknown> };
    this.clock.set(state.now);
    this.keys.restore(state.keys);
    this.wallet.restore(state.wallet);
    for (const room of this.rooms) {
      if (state.rooms[room.name] === undefined) room.reset();
      else room.restore(state.rooms[room.name]);
    }
  }

  /** Real time drives simulated time at `timeScale`; a frozen clock (0) moves only on advance. */
  private startTicker(): void {
    const scale = this.options.timeScale ?? 1;
    if (scale <= 0) return;
    let last = Date.now();
    let exact = this.clock.now();
    this.ticker = setInterval(() => {
      const now = Date.now();
      exact = Math.max(exact, this.clock.now()) + ((now - last) / 1000) * scale;
      last = now;
      if (this.clock.advanceTo(exact, this.rooms) > 0) this.persist();
    }, TICK_MS);
    this.ticker.unref();
  }

  private buildApp(): FastifyInstance {
    const app = Fastify({ bodyLimit: BODY_LIMIT, logger: false, forceCloseConnections: true });
    const mode = errorStatusMode(this.options.errorStatus);
    installErrorHandling(app, BODY_LIMIT, { mode, apiBase: API_BASE });
    app.addHook("onRequest", async (request, reply) => {
      const path = request.url.split("?")[0];
      if (!path.startsWith(`${API_BASE}/`)) return;
      const header = request.headers.authorization;
      const key = bearerKey(header);
      const apiPath = path.slice(API_BASE.length);
      request.logged = this.log.start({
        method: request.method,
        path: apiPath,
        key: key === undefined ? null : fingerprint(key),
        time: this.clock.now(),
      });
      const fault = this.faults.take(apiPath);
      switch (fault?.kind) {
        case "reset":
          request.raw.socket.destroy();
          return reply.hijack();
        case "http_500":
          throw systemError();
        case "http_503":
          throw altError(503, "service_unavailable", "service unavailable: try again later");
        case "http_429":
          throw rateLimited(1);
        case "delay":
          await new Promise((resolve) => setTimeout(resolve, fault.ms ?? 1000));
          break;
        case "drop_after_commit":
          request.dropAfterCommit = true;
          break;
      }
      this.limiter.check(key === undefined ? `ip:${request.ip}` : fingerprint(key));
      if (request.routeOptions.url !== undefined && request.routeOptions.config.public !== true) {
        const caller = this.keys.authenticate(header);
        request.user = caller.user;
        request.keyId = caller.keyId;
      }
    });
    app.addHook("onSend", async (request, _reply, payload) => {
      if (request.method !== "GET" && request.method !== "HEAD") this.persist();
      if (request.dropAfterCommit) request.raw.socket.destroy();
      return payload;
    });
    app.addHook("onResponse", async (request, reply) => {
      if (request.logged && !request.dropAfterCommit) request.logged.status = reply.statusCode;
    });
    registerConsole(app, this);
    app.register(
      async (api) => {
        for (const room of this.rooms) room.register(api);
      },
      { prefix: API_BASE },
    );
    app.register(
      async (admin) => {
        registerAdminRoutes(admin, this);
        for (const room of this.rooms) room.registerAdmin?.(admin);
      },
      { prefix: ADMIN_BASE },
    );
    return app;
  }
}

function bearerKey(header: string | undefined): string | undefined {
  return header === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
}
