/**
 * In core, the API keys: the key ring (which key names which user, which are disabled), its state schema, and
 * how a key is read from a request and shown (a fingerprint, never the key).
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { authenticationFailed, notLoggedIn } from "./http/errors";
import { MAX_STATE_TEXT, nonEmpty } from "./state/schema";

/** How a key appears in logs and dumps: a short hash, never the key itself. */
export function fingerprint(key: string): string {
  return `key_${createHash("sha256").update(key).digest("hex").slice(0, 12)}`;
}

const keyEntrySchema = z.strictObject({ key: nonEmpty, user: nonEmpty, disabled: z.boolean() });
type KeyEntry = z.infer<typeof keyEntrySchema>;
export const keyRingStateSchema = z.array(keyEntrySchema);

/**
 * API keys and the users they belong to. A spec is `KEY` or `USER:KEY` (keys with the same USER share
 * one user), as the CLI's `--api-key`. A bare KEY is its own user, named by the key's
 * fingerprint so that dumps and admin paths never carry the key itself.
 */
export class KeyRing {
  private entries = new Map<string, KeyEntry>();

  seed(specs: readonly string[]): void {
    this.entries.clear();
    for (const spec of specs) {
      const { user, key } = parseKeySpec(spec);
      this.entries.set(key, { key, user, disabled: false });
    }
  }

  users(): string[] {
    return [...new Set([...this.entries.values()].map((e) => e.user))];
  }

  /** The user and key fingerprint behind an accepted key (known, not disabled), or undefined. */
  accepted(key: string | undefined): { user: string; keyId: string } | undefined {
    const entry = key === undefined ? undefined : this.entries.get(key);
    if (!entry || entry.disabled) return undefined;
    return { user: entry.user, keyId: fingerprint(entry.key) };
  }

  /** The user a key belongs to, disabled or not (admin calls take a key where they take a user). */
  userOfKey(key: string): string | undefined {
    return this.entries.get(key)?.user;
  }

  /**
   * Accepts `specs` beside the keys already held (a restart with --state and --api-key): new keys are
   * added and every key given is enabled; a key held already stays with its user. Refuses to move a
   * held key to another user, which would hand one user's instances to another.
   */
  merge(specs: readonly string[]): void {
    for (const spec of specs) {
      const { user, key } = parseKeySpec(spec);
      const held = this.entries.get(key);
      if (held && spec.includes(":") && held.user !== user) {
        throw new Error(
          `API key ${fingerprint(key)} belongs to user ${held.user} in the saved state, not ${user}; give it as ${held.user}:KEY or as a bare KEY`,
        );
      }
      this.entries.set(key, { key, user: held?.user ?? user, disabled: false });
    }
  }

  /** The user and key fingerprint behind an Authorization header; throws 401 code 2 otherwise (never echoing the key). */
  authenticate(header: string | undefined): { user: string; keyId: string } {
    if (header === undefined || header.trim() === "") throw notLoggedIn();
    const key = bearerKey(header);
    if (key === undefined) throw authenticationFailed("the Authorization header must be 'Bearer <API key>'");
    const entry = this.entries.get(key);
    if (!entry) throw authenticationFailed("the API key is not recognised; check the key you configured");
    if (entry.disabled) throw authenticationFailed("the API key is disabled; create or enable another key");
    return { user: entry.user, keyId: fingerprint(entry.key) };
  }

  /** Marks a key as rejected from now on; false when there is no such key. */
  disable(key: string): boolean {
    const entry = this.entries.get(key);
    if (!entry) return false;
    entry.disabled = true;
    return true;
  }

  /** Keys by fingerprint, for dumps. */
  describe(): { fingerprint: string; user: string; disabled: boolean }[] {
    return [...this.entries.values()].map((e) => ({
      fingerprint: fingerprint(e.key),
      user: e.user,
      disabled: e.disabled,
    }));
  }

  snapshot(): KeyEntry[] {
    return [...this.entries.values()].map((e) => ({ ...e }));
  }

  restore(state: KeyEntry[]): void {
    this.entries = new Map(state.map((e) => [e.key, { ...e }]));
  }
}

/** The user a key spec belongs to: USER for `USER:KEY`, the key's fingerprint for a bare KEY. */
export function userOfKeySpec(spec: string): string {
  return parseKeySpec(spec).user;
}

/** The key of an Authorization header `Bearer KEY`, or undefined. */
export function bearerKey(header: string | undefined): string | undefined {
  return header === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
}

export function parseKeySpec(spec: string): { user: string; key: string } {
  const colon = spec.indexOf(":");
  const key = colon === -1 ? spec : spec.slice(colon + 1);
  const user = colon === -1 ? fingerprint(spec) : spec.slice(0, colon);
  if (user === "" || key === "" || /\s/.test(spec) || spec.length > MAX_STATE_TEXT) {
    throw new Error(
      `invalid API key spec: expected KEY or USER:KEY without spaces, at most ${MAX_STATE_TEXT} characters (got ${spec.length} characters)`,
    );
  }
  return { user, key };
}
