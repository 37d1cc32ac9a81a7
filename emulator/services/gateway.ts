/**
 * The services gateway: where an instance's web services and SSH answer, on the emulator's own listener, as
 * the instances store says they are ready.
 */
import { createServer, type Server, type Socket } from "node:net";
import type { FastifyInstance, FastifyReply } from "fastify";
import type { InstancesStore, ServiceState } from "../instances/store";

/** Where an instance's web services answer, on the emulator's own listener. */
export const SERVICES_BASE = "/services";

/** What the SSH endpoint says first, as an sshd does (RFC 4253, 4.2). */
export const SSH_IDENTIFICATION = "SSH-2.0-gpucloud-emulator";

/** An idle SSH connection is closed after this long; nobody logs in to an emulated instance. */
const SSH_IDLE_MS = 30_000;

interface SshListener {
  server: Server;
  port: number;
  sockets: Set<Socket>;
}

/**
 * The HTTP side of instances' services. Web services answer at
 * `http://HOST:PORT/services/<instance_uuid>/<port>/...`; SSH answers on one TCP listener per instance,
 * whose port is in ssh_info. The instances store decides from the clock whether a service is ready;
 * this gateway only asks it, and `sync()` opens and closes SSH listeners to match.
 */
export class ServicesGateway {
  private readonly listeners = new Map<string, SshListener>();
  private syncing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly store: InstancesStore,
    private readonly host: string,
  ) {}

  register(app: FastifyInstance): void {
    for (const path of [`${SERVICES_BASE}/:instance_uuid/:port`, `${SERVICES_BASE}/:instance_uuid/:port/*`]) {
      app.all<{ Params: { instance_uuid: string; port: string } }>(path, async (request, reply) => {
        const { instance_uuid, port } = request.params;
        const number = /^\d{1,5}$/.test(port) ? Number(port) : 0;
        return sendServiceAnswer(reply, instance_uuid, this.store.serviceState(instance_uuid, number));
      });
    }
  }

  /**
   * Brings the SSH listeners in line with the store: gives new instances a port, opens and closes
   * listeners. It never fails: an endpoint that cannot listen stays closed, as a dead sshd would.
   */
  sync(): Promise<void> {
    this.syncing = this.syncing.then(() => this.reconcile().catch(() => undefined));
    return this.syncing;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.syncing;
    await Promise.all([...this.listeners.keys()].map((uuid) => this.stop(uuid)));
  }

  /** How many SSH listeners are open (tests check that none is left behind). */
  openListeners(): number {
    return this.listeners.size;
  }

  private async reconcile(): Promise<void> {
    if (this.closed) return;
    const { unassigned, taken } = this.store.sshPorts();
    for (const uuid of unassigned) {
      const port = await freePort(this.host, taken);
      taken.add(port);
      this.store.assignSshPort(uuid, port);
    }
    const wanted = new Map(this.store.sshEndpoints().map((e) => [e.instance_uuid, e.port]));
    for (const [uuid, listener] of this.listeners) {
      if (wanted.get(uuid) !== listener.port) await this.stop(uuid);
    }
    for (const [uuid, port] of wanted) {
      if (!this.listeners.has(uuid)) await this.start(uuid, port, taken);
    }
  }

  /** Listens on the instance's port; when something else took it meanwhile, on a new one it records. */
  private async start(uuid: string, port: number, taken: Set<number>): Promise<void> {
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => socket.destroy());
      socket.setTimeout(SSH_IDLE_MS, () => socket.destroy());
      socket.write(`${SSH_IDENTIFICATION}\r\n`);
    });
    let bound = await listen(server, this.host, port).catch(() => undefined);
    if (bound === undefined) {
      const fresh = await freePort(this.host, taken);
      taken.add(fresh);
      this.store.assignSshPort(uuid, fresh);
      bound = await listen(server, this.host, fresh);
    }
    if (bound !== undefined) this.listeners.set(uuid, { server, port: bound, sockets });
  }

  private async stop(uuid: string): Promise<void> {
    const listener = this.listeners.get(uuid);
    if (!listener) return;
    this.listeners.delete(uuid);
    for (const socket of listener.sockets) socket.destroy();
    await new Promise<void>((resolve) => listener.server.close(() => resolve()));
  }
}

function sendServiceAnswer(reply: FastifyReply, instanceUuid: string, found: ServiceState): FastifyReply {
  const text = (status: number, message: string) =>
    reply.code(status).type("text/plain; charset=utf-8").send(`${message}\n`);
  switch (found.state) {
    case "ready":
      return reply
        .code(200)
        .type("text/html; charset=utf-8")
        .send(
          `<!doctype html><title>${escapeHtml(found.service.title)}</title>` +
            `<p>${escapeHtml(found.service.title)} on instance ${escapeHtml(instanceUuid)} (gpucloud emulator)</p>\n`,
        );
    case "starting":
      return text(
        503,
        `503 Service Unavailable: ${found.service.title} on instance ${instanceUuid} is starting`,
      );
    case "stopped":
      return text(502, `502 Bad Gateway: instance ${instanceUuid} is not running`);
    case "no_instance":
      return text(502, `502 Bad Gateway: no instance ${instanceUuid}`);
    case "no_such_service":
      return text(404, `404 Not Found: instance ${instanceUuid} exposes no web service on that port`);
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The bound port, or undefined when the port is taken. */
function listen(server: Server, host: string, port: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE") resolve(undefined);
      else reject(error);
    };
    server.once("error", failed);
    server.listen({ host, port }, () => {
      server.off("error", failed);
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : port);
    });
  });
}

/**
 * Where SSH ports are drawn from: below the ports `listen(0)` hands out (Linux's ip_local_port_range
 * starts at 32768). A port from `listen(0)` would be up for grabs by any process's `listen(0)` while its
 * instance is stopped; down here only a program asking for that very number takes it, so an instance
 * keeps its SSH port over a stop and start, as a real one keeps its mapped port.
 */
const SSH_PORTS = { low: 20_000, high: 32_767 };

/** A port the OS has free now and no instance holds (bound, released, recorded by the caller). */
async function freePort(host: string, taken: ReadonlySet<number>): Promise<number> {
  const span = SSH_PORTS.high - SSH_PORTS.low + 1;
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = SSH_PORTS.low + Math.floor(Math.random() * span);
    if (!taken.has(port) && (await bindable(host, port))) return port;
  }
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = await bindable(host, 0);
    if (port !== undefined && !taken.has(port)) return port;
  }
  throw new Error("no free port for an SSH endpoint");
}

/** Binds the port and lets it go: the bound port, or undefined when it is taken. */
async function bindable(host: string, port: number): Promise<number | undefined> {
  const probe = createServer();
  const bound = await listen(probe, host, port).catch(() => undefined);
  if (bound !== undefined) await new Promise<void>((resolve) => probe.close(() => resolve()));
  return bound;
}
