/**
 * The emulator put together: the shared core, the room list, the admin API, the console and the services
 * gateway behind one HTTP server, and the real-time ticker.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { AccountRoom } from "./account/routes";
import { AssetsRoom } from "./assets/routes";
import { CatalogueRoom } from "./catalogue/routes";
import { CATALOGUE_SEED } from "./catalogue/seed";
import { CatalogueStore } from "./catalogue/store";
import { answerConsoleRefusal, consoleAreaOf, registerConsole } from "./console/routes";
import { AccessGuard, type Area, isLoopbackAddress } from "./core/http/access";
import { registerAdminRoutes } from "./core/controls/admin-api";
import { ADMIN_BASE, API_BASE, BODY_LIMIT, type EmulatorControls } from "./core/controls/emulator-controls";
import { bearerKey, fingerprint, KeyRing } from "./core/auth";
import { SimClock } from "./core/clock";
import { errorStatusMode, installErrorHandling, sendError } from "./core/http/envelope";
import { isAnswerFault, rewriteAnswer, type AnswerFaultKind } from "./core/controls/answer-faults";
import { altError, ApiError, notLoggedIn, rateLimited, systemError } from "./core/http/errors";
import { FaultTable } from "./core/controls/faults";
import { newId } from "./core/ids";
import { checkOptions, LatencyTable, OptionError, resolveDurations } from "./core/options";
import { StateFile, StateFileError } from "./core/state/persistence";
import { RateLimiter } from "./core/http/ratelimit";
import { type LoggedRequest, RequestLog } from "./core/controls/requestlog";
import type { Room, RoomContext } from "./core/room";
import { loadSeed } from "./core/state/seed";
import { exportState, importState, serializeState, type StateHolders } from "./core/state/document";
import { StateProblem } from "./core/state/schema";
import { Wallet } from "./core/wallet";
import { ImagesRoom } from "./images/routes";
import { InstancesRoom } from "./instances/routes";
import type { InstancesStore } from "./instances/store";
import { VIDEO_MODELS_SEED } from "./model-runs/models";
import { ModelRunsRoom } from "./model-runs/routes";
import { ServicesGateway, SERVICES_BASE } from "./services/gateway";
import { StockRoom } from "./stock/routes";
import { resolveGpuStock } from "./stock/setting";
import { StockStore } from "./stock/store";
import { WorkflowsRoom } from "./workflows/routes";
import { WORKFLOWS_SEED } from "./workflows/seed";
import type { EmulatorOptions } from "./core/emulator-options";

export type { EmulatorOptions } from "./core/emulator-options";

const TICK_MS = 250;
/** Changes made by the clock alone are saved at most this often; they replay from the saved clock anyway. */
const TICK_SAVE_MS = 1000;
/** A request must arrive whole within this long; slower senders are cut off with 408. */
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_CONNECTIONS = 1024;
/**
 * Idle keep-alive connections close after this long, as load balancers commonly keep them (clients read it
 * from the Keep-Alive header and close theirs a little earlier). Not Node's 5 s: a client whose process
 * stalls past the idle time (a busy event loop, a starved machine) can send its next request on the
 * connection just as the emulator closes it and read ECONNRESET, which for a create is an unknown outcome.
 * A test's client and emulator share one event loop, so a 6 s stall there did exactly that in CI.
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** Paths in the request log are cut to this length: a log entry must not grow with a crafted URL. */
const MAX_LOGGED_PATH = 512;

declare module "fastify" {
  interface FastifyRequest {
    user?: string;
    keyId?: string;
    /** The path relative to the API base, without a trailing slash; set on API calls only. */
    apiPath?: string;
    logged?: LoggedRequest;
    dropAfterCommit?: boolean;
    /** Fault http_500_after_commit: the call is carried out, then answered with a system error. */
    failAfterCommit?: boolean;
    /** late_commit: how long to hold the request before carrying it out. */
    holdMs?: number;
    /** A fault that carries the call out, then changes its answer (core/controls/answer-faults.ts). */
    answerFault?: AnswerFaultKind;
  }
  interface FastifyContextConfig {
    // Public routes: docs/design/cloud-api.md#authentication.
    /** The route needs no API key. */
    public?: boolean;
  }
}

/** The whole emulator: shared core, the room list, the HTTP app and the real-time ticker. */
export class Emulator implements EmulatorControls {
  readonly clock: SimClock;
  readonly keys = new KeyRing();
  readonly wallet: Wallet;
  readonly faults = new FaultTable();
  readonly log = new RequestLog();
  readonly rooms: Room[];
  readonly instances: InstancesStore;
  readonly stock: StockStore;
  readonly gateway: ServicesGateway;
  readonly limiter: RateLimiter;
  /** Which requests are served: the Host allow-list, the origin check and the admin key. */
  readonly access: AccessGuard;
  readonly app: FastifyInstance;
  /** What the start did that the caller should know of (the CLI prints them on stderr). */
  readonly notices: string[] = [];
  /** The `--state` file, when there is one. */
  readonly stateFile?: StateFile;
  private readonly apiRoutes: RegExp[] = [];
  private latency?: LatencyTable;
  private opening?: Promise<void>;
  private ticker?: NodeJS.Timeout;
  private tickSave?: NodeJS.Timeout;
  private publicUrl: string;

  constructor(private readonly options: EmulatorOptions = {}) {
    checkOptions(options);
    // The areas that read a `--seed FILE`: adding one is one entry here.
    const seed = loadSeed([CATALOGUE_SEED, WORKFLOWS_SEED, VIDEO_MODELS_SEED], options.seedFile);
    this.clock = new SimClock(options.startTime ?? Math.floor(Date.now() / 1000));
    this.wallet = new Wallet(() => this.clock.now(), newId);
    this.limiter = new RateLimiter(options.rateLimit ?? 0);
    this.publicUrl = urlOf(options.host ?? "127.0.0.1", options.port ?? 8787);
    this.access = new AccessGuard({
      host: options.host ?? "127.0.0.1",
      allowedHosts: options.allowedHosts,
      adminKey: options.adminKey,
    });
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
    };

    // The room list: adding an API area is one line here.
    const durations = resolveDurations(options.durations);
    const catalogue = new CatalogueRoom(new CatalogueStore(seed.of(CATALOGUE_SEED)));
    const images = new ImagesRoom(ctx, durations.save_image);
    // The stock counts the cards instances hold; the instances ask the stock before they take any.
    const cardsInUse = (): ReadonlyMap<string, number> => instances.store.cardsInUse();
    const gpuStock = resolveGpuStock(options.gpuStock, catalogue.store);
    const stock = new StockRoom(new StockStore(catalogue.store, gpuStock, cardsInUse));
    const instances = new InstancesRoom(ctx, {
      catalogue: catalogue.store,
      images: images.store,
      stock: stock.store,
      durations,
      startingUtilization: options.utilization ?? { gpu: 0, fb: 0 },
      addresses: {
        sshHost: () => new URL(this.publicUrl).hostname.replace(/^\[|\]$/g, ""),
        webService: (uuid, port) => `${this.publicUrl}${SERVICES_BASE}/${encodeURIComponent(uuid)}/${port}/`,
      },
    });
    const assets = new AssetsRoom(ctx);
    this.rooms = [
      catalogue,
      images,
      instances,
      stock,
      new AccountRoom(ctx),
      assets,
      new WorkflowsRoom(ctx, assets.store, seed.of(WORKFLOWS_SEED)),
      new ModelRunsRoom(ctx, assets.store, seed.of(VIDEO_MODELS_SEED)),
    ];
    this.instances = instances.store;
    this.stock = stock.store;
    this.gateway = new ServicesGateway(this.instances, options.host ?? "127.0.0.1");

    this.seed();
    this.refuseApiKeyAsAdminKey();
    if (options.stateFile !== undefined) {
      this.stateFile = new StateFile(options.stateFile, () => serializeState(this.holders()));
    }
    this.warnOfExposure();
    this.app = this.buildApp();
  }

  /**
   * Takes the state file, if there is one, and starts from what it holds (once; `listen` does it first).
   * A file another emulator holds, or that cannot be read or does not fit, is refused naming it, and
   * left as it is.
   */
  open(): Promise<void> {
    this.opening ??= this.stateFile === undefined ? Promise.resolve() : this.startFrom(this.stateFile);
    return this.opening;
  }

  /** Moves simulated time forward, running every transition due on the way; resolves once saved. */
  advance(seconds: number): Promise<void> {
    this.clock.advanceTo(this.clock.exactNow() + seconds, this.rooms);
    return this.settle();
  }

  /** Back to the seeded state: keys, balances and every room (POST /_emulator/reset). Time keeps going. */
  reset(): Promise<void> {
    this.seed();
    return this.settle();
  }

  /** The whole state as one JSON document (GET /_emulator/snapshot; the state file holds the same). */
  exportState(): Record<string, unknown> {
    return exportState(this.holders());
  }

  /**
   * Replaces the whole state with an exported one (PUT /_emulator/snapshot). A document that does not
   * fit is refused naming the field, and nothing changes.
   */
  importState(document: unknown): Promise<void> {
    importState(this.holders(), document);
    this.limiter.clear();
    return this.settle();
  }

  /** Resolves once the SSH listeners match the state and the state file (if any) holds it. */
  async settle(): Promise<void> {
    await this.gateway.sync();
    await this.stateFile?.save();
  }

  async listen(): Promise<{ url: string; port: number }> {
    const host = this.options.host ?? "127.0.0.1";
    await this.open();
    await this.app.ready();
    this.latency = LatencyTable.from(this.options.latency, (path) =>
      this.apiRoutes.some((route) => route.test(path)),
    );
    await this.app.listen({ host, port: this.options.port ?? 8787 });
    this.app.server.maxConnections = this.options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
    const address = this.app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : (this.options.port ?? 8787);
    this.publicUrl = urlOf(host, port);
    await this.settle();
    this.startTicker();
    return { url: this.publicUrl, port };
  }

  async close(): Promise<void> {
    if (this.ticker) clearInterval(this.ticker);
    if (this.tickSave) clearTimeout(this.tickSave);
    this.ticker = undefined;
    this.tickSave = undefined;
    await this.gateway.close();
    await this.app.close();
    try {
      if (this.stateFile?.held) await this.stateFile.save();
    } finally {
      this.stateFile?.release();
    }
  }

  private holders(): StateHolders {
    return { clock: this.clock, keys: this.keys, wallet: this.wallet, rooms: this.rooms };
  }

  private seed(): void {
    this.keys.seed(this.keySpecs() ?? ["demo-key"]);
    this.wallet.clear();
    this.openMissingAccounts();
    for (const room of this.rooms) room.reset();
    this.faults.clear();
    this.log.clear();
    this.limiter.clear();
  }

  /**
   * Starts from the state file, which it takes for itself (the lock) first: a file that cannot be read
   * or does not fit is refused and left as it is, and so is the lock. Keys given now are accepted besides
   * the saved ones (--help says so).
   */
  private async startFrom(file: StateFile): Promise<void> {
    try {
      this.notices.push(...(await file.claim()));
      this.restoreFrom(file);
      this.refuseApiKeyAsAdminKey();
      file.saveNow();
    } catch (error) {
      file.release();
      throw error;
    }
  }

  private restoreFrom(file: StateFile): void {
    const saved = file.load();
    if (saved === undefined) {
      this.seed();
    } else {
      try {
        importState(this.holders(), saved);
      } catch (problem) {
        if (problem instanceof StateProblem)
          throw new StateFileError(file.path, `is refused: ${problem.message}`);
        throw problem;
      }
      // --gpu-stock sets those models' free cards now; the others keep their saved stock.
      this.stock.applySeeded();
      const given = this.keySpecs();
      if (given !== undefined) this.mergeKeys(given);
      const savedUsers = this.wallet.users().length;
      this.openMissingAccounts();
      if (this.options.balance !== undefined && savedUsers > 0) {
        this.notices.push(
          `--balance ${this.options.balance} is the starting balance of users new to ${file.path}; ` +
            `the ${savedUsers} saved user(s) keep their balances (PUT /_emulator/users/{user}/balance sets one)`,
        );
      }
    }
  }

  /** An admin key that is also an API key would give every holder of that API key the admin's power. */
  private refuseApiKeyAsAdminKey(): void {
    const adminKey = this.options.adminKey;
    if (adminKey !== undefined && this.keys.userOfKey(adminKey) !== undefined) {
      throw new OptionError(
        "adminKey",
        "must differ from every API key, which would otherwise open the admin API",
      );
    }
  }

  /** Listening beyond loopback lets the network in: the start says to whom and what it reaches. */
  private warnOfExposure(): void {
    const host = this.options.host ?? "127.0.0.1";
    if (isLoopbackAddress(host)) return;
    const reach = `whoever reaches ${host} on the network can use the API with any key it knows`;
    const usesDemoKey =
      this.keySpecs() === undefined
        ? " (demo-key, the default, is public: give your own with --api-key)"
        : "";
    this.notices.push(
      this.access.adminKeyRequired
        ? `warning: --host ${host} is not a loopback address: ${reach}${usesDemoKey}; the admin API, ` +
            "GET /_emulator/snapshot and the web console ask for the admin key"
        : `warning: --host ${host} is not a loopback address: ${reach}${usesDemoKey}, and with no key at all ` +
            "the admin API (reset, clock, faults, balances, key disabling), GET /_emulator/snapshot (every API key " +
            "and SSH password) and the web console; start with --admin-key to protect them",
    );
  }

  private keySpecs(): string[] | undefined {
    const specs = this.options.apiKeys;
    return specs !== undefined && specs.length > 0 ? specs : undefined;
  }

  private mergeKeys(specs: readonly string[]): void {
    try {
      this.keys.merge(specs);
    } catch (error) {
      throw new OptionError("apiKeys", (error as Error).message);
    }
  }

  private openMissingAccounts(): void {
    for (const user of this.keys.users()) {
      if (!this.wallet.hasUser(user)) this.wallet.open(user, this.options.balance ?? 1000);
    }
  }

  /** Real time drives simulated time at `timeScale`; a frozen clock (0) moves only on advance. */
  private startTicker(): void {
    const scale = this.options.timeScale ?? 1;
    if (scale <= 0) return;
    let last = Date.now();
    this.ticker = setInterval(() => {
      const now = Date.now();
      const target = this.clock.exactNow() + ((now - last) / 1000) * scale;
      last = now;
      if (this.clock.advanceTo(target, this.rooms) > 0) {
        void this.gateway.sync();
        this.saveSoon();
      }
    }, TICK_MS);
    this.ticker.unref();
  }

  private saveSoon(): void {
    if (this.stateFile === undefined || this.tickSave !== undefined) return;
    this.tickSave = setTimeout(() => {
      this.tickSave = undefined;
      this.stateFile?.save().catch(() => undefined);
    }, TICK_SAVE_MS);
    this.tickSave.unref();
  }

  private buildApp(): FastifyInstance {
    const requestTimeout = this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const app = Fastify({
      bodyLimit: BODY_LIMIT,
      logger: false,
      forceCloseConnections: true,
      requestTimeout,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      http: {
        headersTimeout: Math.min(requestTimeout, 60_000),
        // Node checks request timeouts only this often (30 s by default).
        connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(requestTimeout / 4))),
      },
      // A trailing slash names the same resource, as most API gateways route it.
      routerOptions: { ignoreTrailingSlash: true },
    });
    installErrorHandling(app, BODY_LIMIT, {
      mode: errorStatusMode(this.options.errorStatus),
      apiBase: API_BASE,
    });
    app.addHook("onRoute", (route) => {
      if (route.url.startsWith(`${API_BASE}/`))
        this.apiRoutes.push(routePattern(route.url.slice(API_BASE.length)));
    });
    app.addHook("onRequest", async (request, reply) => this.admitRequest(request, reply));
    app.addHook("onRequest", (request, reply) => this.admitApiCall(request, reply));
    app.addHook("preHandler", async (request) => {
      if (request.apiPath === undefined) return;
      const ms = (this.latency?.of(request.apiPath) ?? 0) + (request.holdMs ?? 0);
      if (ms > 0) await sleep(ms);
    });
    app.addHook("onSend", async (request, reply, payload) => {
      let answer = payload;
      if (request.method !== "GET" && request.method !== "HEAD")
        answer = await this.settleBeforeAnswer(reply, answer);
      if (request.failAfterCommit) answer = errorAnswer(reply, systemError());
      if (request.answerFault && typeof answer === "string")
        answer = faultyAnswer(reply, request.answerFault, answer);
      reply.header("date", new Date(this.clock.now() * 1000).toUTCString());
      if (request.dropAfterCommit) request.raw.socket.destroy();
      return answer;
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
    this.gateway.register(app);
    return app;
  }

  /**
   * Refuses what the access guard refuses, before anything else sees the request. The area comes from
   * the route matched, not the path as sent, so no spelling of a path (%5F, a trailing slash) escapes it.
   */
  private admitRequest(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
    const route = request.routeOptions.url ?? "";
    const consoleArea = consoleAreaOf(route);
    const area: Area = consoleArea ?? (route.startsWith(`${ADMIN_BASE}/`) ? "control" : "open");
    const refusal = this.access.judge(request.method, request.headers, area);
    if (refusal === undefined) return undefined;
    if (consoleArea !== undefined) return answerConsoleRefusal(request, reply, refusal);
    return sendError(reply, altError(refusal.status, refusal.error, refusal.message, refusal.headers));
  }

  /** Logs an API call, then plays its fault, its rate limit and its authentication, in that order. */
  private async admitApiCall(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const path = request.url.split("?")[0];
    // The base itself is `${API_BASE}/` without its slash: an API call, as every trailing slash is.
    if (path !== API_BASE && !path.startsWith(`${API_BASE}/`)) return;
    const apiPath = path.slice(API_BASE.length).replace(/(.)\/+$/, "$1") || "/";
    request.apiPath = apiPath;
    const key = bearerKey(request.headers.authorization);
    request.logged = this.log.start({
      method: request.method,
      path: apiPath.slice(0, MAX_LOGGED_PATH),
      key: key === undefined ? null : fingerprint(key),
      time: this.clock.now(),
    });
    const fault = this.faults.take(apiPath);
    switch (fault?.kind) {
      case "reset":
        request.raw.socket.destroy();
        return void reply.hijack();
      case "http_500":
        throw systemError();
      case "http_503":
        throw altError(503, "service_unavailable", "service unavailable: try again later");
      case "http_429":
        throw rateLimited(1);
      case "delay":
        await sleep(fault.ms ?? 1000);
        break;
      case "drop_after_commit":
        request.dropAfterCommit = true;
        break;
      case "http_500_after_commit":
        request.failAfterCommit = true;
        break;
      case "late_commit":
        request.holdMs = fault.ms;
        break;
      default:
        if (fault && isAnswerFault(fault.kind)) request.answerFault = fault.kind;
    }
    // Only accepted keys are counted as themselves; anything else counts against the client's address.
    const caller = this.keys.accepted(key);
    this.limiter.check(caller ? caller.keyId : `ip:${request.ip}`);
    if (request.routeOptions.url !== undefined && request.routeOptions.config.public !== true) {
      const authenticated = this.keys.authenticate(request.headers.authorization);
      request.user = authenticated.user;
      request.keyId = authenticated.keyId;
    }
  }

  /** A change is answered only once it is saved; when it cannot be, the answer says so instead. */
  private async settleBeforeAnswer(reply: FastifyReply, payload: unknown): Promise<unknown> {
    try {
      await this.settle();
      return payload;
    } catch (error) {
      const failure = new ApiError(
        500,
        -2,
        `system error: the change could not be saved (${error instanceof Error ? error.message : String(error)})`,
      );
      return errorAnswer(reply, failure);
    }
  }
}

/** Turns the answer being sent into `failure`'s. */
function errorAnswer(reply: FastifyReply, failure: ApiError): string {
  reply.code(failure.status).header("content-type", "application/json; charset=utf-8");
  return JSON.stringify(failure.body());
}

/** The answer being sent as an answer fault changes it. */
function faultyAnswer(reply: FastifyReply, kind: AnswerFaultKind, payload: string): string | Buffer {
  const { status, headers, body } = rewriteAnswer(kind, payload);
  if (status !== undefined) reply.code(status);
  reply.headers(headers);
  return body;
}

/** A hold that does not keep the process alive: a request held when the emulator closes just ends. */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function urlOf(host: string, port: number): string {
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** A route URL such as `/assets/:asset_id` as a pattern matching the paths it serves. */
function routePattern(url: string): RegExp {
  return new RegExp(`^${url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[^/]+/g, "[^/]+")}$`);
}
