/**
 * Secrets in a state file, encrypted with a passphrase the caller gives, in the manner of Pulumi's passphrase
 * secrets provider: a key derived from the passphrase and a random salt (scrypt), each secret value sealed
 * with AES-256-GCM under its own random nonce, and a sealed check value that tells a wrong passphrase apart
 * from a damaged file.
 */
import * as crypto from "node:crypto";

const FORMAT = "v1";
const CHECK_VALUE = "pulumi-gpucloud state";

/** What the state file keeps to reopen its secrets: the salt and the sealed check value. */
export interface SealedKey {
  salt: string;
  check: string;
}

export class WrongPassphraseError extends Error {
  override readonly name = "WrongPassphraseError";
}

export class Sealer {
  private constructor(
    private readonly key: Buffer,
    readonly sealedKey: SealedKey,
  ) {}

  /** A new key for a new state file. */
  static create(passphrase: string): Sealer {
    const salt = crypto.randomBytes(16).toString("base64");
    const key = derive(passphrase, salt);
    return new Sealer(key, { salt, check: seal(key, CHECK_VALUE) });
  }

  /** The key of an existing state file; a passphrase that does not open it throws WrongPassphraseError. */
  static open(passphrase: string, sealedKey: SealedKey): Sealer {
    const key = derive(passphrase, sealedKey.salt);
    let check: string | undefined;
    try {
      check = open(key, sealedKey.check);
    } catch {
      check = undefined;
    }
    if (check !== CHECK_VALUE) throw new WrongPassphraseError("the passphrase does not open it");
    return new Sealer(key, sealedKey);
  }

  seal(value: unknown): string {
    return seal(this.key, JSON.stringify(value ?? null));
  }

  open(ciphertext: string): unknown {
    return JSON.parse(open(this.key, ciphertext));
  }
}

function derive(passphrase: string, salt: string): Buffer {
  return crypto.scryptSync(passphrase, Buffer.from(salt, "base64"), 32);
}

/** `v1:<nonce>:<ciphertext and tag>`, both base64. */
function seal(key: Buffer, text: string): string {
  const nonce = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv("aes-256-gcm", key, nonce);
  const sealed = Buffer.concat([cipher.update(text, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return `${FORMAT}:${nonce.toString("base64")}:${sealed.toString("base64")}`;
}

function open(key: Buffer, ciphertext: string): string {
  const [format, nonce, sealed] = ciphertext.split(":");
  if (format !== FORMAT || !nonce || !sealed) throw new Error("not a sealed value");
  const bytes = Buffer.from(sealed, "base64");
  const decipher = crypto.createDecipheriv("aes-256-gcm", key, Buffer.from(nonce, "base64"));
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString(
    "utf8",
  );
}
