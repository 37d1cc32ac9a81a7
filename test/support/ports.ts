/**
 * Loopback ports a test can count on while other test workers (and a second `npm test`) open and
 * close listeners of their own. A port freed by closing a listener is no such port: every
 * `listen(0)` on the machine draws from the same ephemeral range, and one drew a freed port between a
 * test's close and its connect (a CI run saw a create meant to be refused reach somebody's server).
 * `listen(0)` never hands out a port below that range, so ports there are only ever taken on purpose.
 */
import { connect, createServer } from "node:net";

const HOST = "127.0.0.1";

function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: HOST, port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });
}

/**
 * A privileged port that refuses connections, and keeps refusing: no test binds a fixed port, and
 * `listen(0)` never gives one out.
 */
export async function refusedPort(): Promise<number> {
  for (let port = 1; port < 1024; port += 1) if (await refuses(port)) return port;
  throw new Error("every privileged loopback port accepts connections; no port is known to refuse");
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen({ host: HOST, port, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/**
 * A free port for a server a test stops and starts again on the same port: below 20000, where neither
 * `listen(0)` nor the emulator's SSH endpoints (20000 to 32767) draw, so no other worker takes it while
 * the server is down. Drawn at random, so two tests asking at once (in two runs of the suite) almost
 * never draw the same one.
 */
export async function portToReuse(): Promise<number> {
  const [low, high] = [10_000, 19_999];
  for (let tries = 0; tries < 50; tries += 1) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free loopback port between ${low} and ${high}`);
}
