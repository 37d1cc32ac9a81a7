import { createHash } from "node:crypto";
import { authenticationFailed, notLoggedIn } from "./errors";

/** How a key appears in logs and dumps: a short hash, never the key itself. */
export function fingerprint(key: string): string {
  return `key_${createHash("sha256").update(key).digest("hex").slice(0, 12)}`;
}

interface KeyEntry {
  key: string;
  user: string;
  disabled: boolean;
}

/**
 * API keys and the users they belong to. A spec is `KEY` or `USER:KEY` (keys with the same USER share
 * one user), as the CLI's `--api-key` (DESIGN §5). A bare KEY is its own user, named by the key's
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

  /** The user and key fingerprint behind an Authorization header; throws 401 code 2 otherwise (never echoing the key). */
  authenticate(header: string | undefined): { user: string; keyId: string } {
    if (header === undefined || header.trim() === "") throw notLoggedIn();
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw authenticationFailed("the Authorization header must be 'Bearer <API key>'");
    const entry = this.entries.get(match[1]);
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

  restore(state: unknown): void {
    this.entries = new Map((state as KeyEntry[]).map((e) => [e.key, { ...e }]));
  }
}

/** The user a key spec belongs to: USER for `USER:KEY`, the key's fingerprint for a bare KEY. */
export function userOfKeySpec(spec: string): string {
  return parseKeySpec(spec).user;
}

export function parseKeySpec(spec: string): { user: string; key: string } {
  const colon = spec.indexOf(":");
  const key = colon === -1 ? spec : spec.slice(colon + 1);
  const user = colon === -1 ? fingerprint(spec) : spec.slice(0, colon);
  if (user === "" || key === "" || /\s/.test(spec)) {
    throw new Error(
      `invalid API key spec: expected KEY or USER:KEY without spaces (got ${spec.length} characters)`,
    );
  }
  return { user, key };
}
