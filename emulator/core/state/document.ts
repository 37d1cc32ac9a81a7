/**
 * In core's state room, the whole state as one versioned JSON document (the clock, keys, wallet and every
 * room's part): exported, serialized for the state file, and imported only whole and only when every part
 * fits.
 */
import { z } from "zod";
import { type KeyRing, keyRingStateSchema } from "../auth";
import type { SimClock } from "../clock";
import type { Room } from "../room";
import type { KnownState } from "./schema";
import { chunk, type Chunks } from "./settled-json";
import { parseState, requireUser, seconds, StateProblem } from "./schema";
import { type Wallet, walletStateSchema } from "../wallet";

/** The version of the state document this emulator writes and reads. */
export const STATE_VERSION = 1;

/** What the whole state is made of: the clock, the keys, the wallet and every room. */
export interface StateHolders {
  clock: SimClock;
  keys: KeyRing;
  wallet: Wallet;
  rooms: readonly Room[];
}

/**
 * The whole state as one JSON document: what `--state FILE` holds and what `GET /_emulator/snapshot`
 * exports (keys and SSH passwords included). Faults and the request log are test controls, not state.
 */
export function exportState(holders: StateHolders): Record<string, unknown> {
  return {
    version: STATE_VERSION,
    now: holders.clock.now(),
    keys: holders.keys.snapshot(),
    wallet: holders.wallet.snapshot(),
    rooms: Object.fromEntries(holders.rooms.map((room) => [room.name, room.snapshot()])),
  };
}

/** `JSON.stringify(exportState(holders))` in encoded chunks, built from each room's own serialization. */
export function serializeState(holders: StateHolders): Chunks {
  const chunks: Chunks = [
    chunk(
      `{"version":${STATE_VERSION},"now":${holders.clock.now()},"keys":${JSON.stringify(holders.keys.snapshot())},` +
        `"wallet":${JSON.stringify(holders.wallet.snapshot())},"rooms":{`,
    ),
  ];
  holders.rooms.forEach((room, index) => {
    chunks.push(chunk(`${index === 0 ? "" : ","}${JSON.stringify(room.name)}:`));
    chunks.push(...(room.serializeState?.() ?? [chunk(JSON.stringify(room.snapshot()))]));
  });
  chunks.push(chunk("}}"));
  return chunks;
}

/**
 * Replaces the whole state with `document`, or throws a StateProblem naming the first field at fault
 * and changes nothing. Every room's part is parsed with its schema and checked against the rest (its
 * records' users and reservations must exist) before anything is applied.
 */
export function importState(holders: StateHolders, document: unknown): void {
  const state = parseState(documentSchema(holders.rooms), checkVersion(document));
  const known: KnownState = {
    users: new Set(Object.keys(state.wallet.balances)),
    reservations: new Set(state.wallet.reservations.map((r) => r.reservation_id)),
  };
  state.keys.forEach((key, index) => requireUser(known, `keys[${index}].user`, key.user));
  state.wallet.reservations.forEach((reservation, index) =>
    requireUser(known, `wallet.reservations[${index}].user`, reservation.user),
  );
  const roomStates = state.rooms as Record<string, unknown>;
  for (const room of holders.rooms) {
    const part = roomStates[room.name];
    if (part === undefined) continue;
    try {
      room.checkState?.(part, known);
    } catch (problem) {
      if (!(problem instanceof StateProblem)) throw problem;
      throw new StateProblem(joinPath(`rooms.${room.name}`, problem.path), problem.rule);
    }
  }

  holders.clock.set(state.now);
  holders.keys.restore(state.keys);
  holders.wallet.restore(state.wallet);
  for (const room of holders.rooms) {
    const part = roomStates[room.name];
    if (part === undefined) room.reset();
    else room.restore(part);
  }
}

function documentSchema(rooms: readonly Room[]) {
  return z.strictObject({
    version: z.literal(STATE_VERSION),
    now: seconds,
    keys: keyRingStateSchema,
    wallet: walletStateSchema,
    // A room missing from the document starts empty: documents written before it existed lack it.
    rooms: z.strictObject(Object.fromEntries(rooms.map((room) => [room.name, room.stateSchema.optional()]))),
  });
}

/** A document of another version is refused by what it is, before its fields are judged by this one's rules. */
function checkVersion(document: unknown): unknown {
  if (document === null || typeof document !== "object" || Array.isArray(document)) {
    throw new StateProblem("", "must be a JSON object as GET /_emulator/snapshot exports it");
  }
  const version = (document as { version?: unknown }).version;
  if (version === undefined) {
    throw new StateProblem(
      "version",
      `is required (${STATE_VERSION}); this is not an emulator state document`,
    );
  }
  if (version !== STATE_VERSION) {
    throw new StateProblem(
      "version",
      `is ${JSON.stringify(version)}, but this emulator reads version ${STATE_VERSION}: it was written by another version`,
    );
  }
  return document;
}

function joinPath(prefix: string, path: string): string {
  if (path === "") return prefix;
  return path.startsWith("[") ? `${prefix}${path}` : `${prefix}.${path}`;
}
