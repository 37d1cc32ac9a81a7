/**
 * In core, fresh ids and secrets.
 */
import { randomBytes } from "node:crypto";

/**
 * Opaque, unguessable ids such as `ins-3f9c1a7e0b2d4c68` (identifiers are opaque strings:
 * docs/design/cloud-api.md#base-and-transport).
 */
export function newId(prefix: string): string {
  return `${prefix}-${randomBytes(8).toString("hex")}`;
}

/** A random secret, e.g. an instance's SSH password. */
export function newSecret(length = 20): string {
  const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
  return [...randomBytes(length)].map((b) => alphabet[b % alphabet.length]).join("");
}
