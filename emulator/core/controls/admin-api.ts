/**
 * In core's controls, the admin API's shared routes (`/_emulator/...`): reset, clock, faults, request log,
 * balances, keys, state and snapshot, over the controls' shape rather than the server. Rooms add their own
 * (instances, GPU stock).
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { fingerprint } from "../auth";
import { ApiError, paramError } from "../http/errors";
import { faultSchema } from "./faults";
import { StateProblem } from "../state/schema";
import { amount, parseBody } from "../http/validation";
import type { EmulatorControls } from "./emulator-controls";

/** A snapshot holds every run's inputs: it may be far larger than an API body. */
const SNAPSHOT_BODY_LIMIT = 256 * 1024 * 1024;

/** Keys whose values are secrets: the state dump shows them as "<redacted>". */
const SECRET_KEYS = new Set(["password", "key"]);

/**
 * The admin API (docs/design/contracts.md#admin-api): outside the API base, no key, no rate limit, no faults.
 * Answers are plain JSON (GET /_emulator/clock is `{"now": N}`); failures use the API envelope.
 */
export function registerAdminRoutes(admin: FastifyInstance, emulator: EmulatorControls): void {
  admin.post("/reset", async () => {
    await emulator.reset();
    return { reset: true, now: emulator.clock.now() };
  });

  admin.get("/clock", async () => ({ now: emulator.clock.now() }));

  admin.post("/clock/advance", async (request) => {
    const { seconds } = parseBody(
      z.object({
        seconds: z
          .number()
          .min(0)
          .max(10 * 365 * 86400),
      }),
      request.body,
    );
    await emulator.advance(seconds);
    return { now: emulator.clock.now() };
  });

  admin.post("/faults", async (request) => {
    emulator.faults.add(parseBody(faultSchema, request.body));
    return { faults: emulator.faults.list() };
  });
  admin.get("/faults", async () => ({ faults: emulator.faults.list() }));
  admin.delete("/faults", async () => {
    emulator.faults.clear();
    return { faults: [] };
  });

  admin.get("/requests", async () => ({ requests: emulator.log.list() }));
  admin.delete("/requests", async () => {
    emulator.log.clear();
    return { requests: [] };
  });

  // {user} is a user name or one of that user's API keys, so nobody needs /state to learn the name.
  admin.put<{ Params: { user: string } }>("/users/:user/balance", async (request) => {
    const { balance } = parseBody(z.object({ balance: amount(false) }), request.body);
    const user = userNamed(emulator, request.params.user);
    emulator.wallet.setBalance(user, balance);
    return { user, balance: emulator.wallet.balance(user) };
  });

  admin.post<{ Params: { key: string } }>("/keys/:key/disable", async (request) => {
    // The router has decoded the path segment already.
    const { key } = request.params;
    if (!emulator.keys.disable(key)) throw new ApiError(404, -1, `key not found: ${fingerprint(key)}`);
    return { disabled: true, key: fingerprint(key) };
  });

  admin.get("/state", async () => {
    // Read what is saved: a caller that stops the emulator next must not see more than the file holds.
    await emulator.settle();
    return {
      now: emulator.clock.now(),
      users: emulator.keys.users().map((user) => ({ user, balance: emulator.wallet.balance(user) })),
      keys: emulator.keys.describe(),
      wallet: emulator.wallet.snapshot(),
      rooms: Object.fromEntries(emulator.rooms.map((room) => [room.name, redact(room.snapshot())])),
    };
  });

  // The whole state, secrets included: this is the admin API of a local tool (docs/emulator.md says so).
  admin.get("/snapshot", async () => {
    await emulator.settle();
    return emulator.exportState();
  });
  admin.put("/snapshot", { bodyLimit: SNAPSHOT_BODY_LIMIT }, async (request) => {
    try {
      await emulator.importState(request.body);
    } catch (problem) {
      if (problem instanceof StateProblem) throw paramError(problem.path || "body", problem.rule);
      throw problem;
    }
    return { imported: true, now: emulator.clock.now() };
  });
}

function userNamed(emulator: EmulatorControls, userOrKey: string): string {
  if (emulator.wallet.hasUser(userOrKey)) return userOrKey;
  const owner = emulator.keys.userOfKey(userOrKey);
  if (owner !== undefined) return owner;
  // The segment may be a mistyped key: it is not echoed.
  throw new ApiError(
    404,
    -1,
    "user not found: no user has that name and no API key matches it (GET /_emulator/state lists the users)",
  );
}

function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, SECRET_KEYS.has(k) ? "<redacted>" : redact(v)]),
  );
}
