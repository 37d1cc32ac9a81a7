/**
 * Values as the Pulumi engine passes them to providers and programs: the unknown sentinel of a preview and
 * the wrapping that marks a secret.
 */

/** A resource's or a stack's properties: plain JSON values, secrets wrapped with `secret()`. */
export type Props = Record<string, unknown>;

/** The string the engine sends in place of a value that is not known yet (during preview). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** The signature key and value the engine wraps a secret in on the wire. */
const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";
const SECRET_SIG_VALUE = "1b47061264138c4ac30d75fd1eb44270";

/** A secret value as the engine passes it: `{ "4dabf...": "1b470...", value }`. */
export interface WrappedSecret {
  [SECRET_SIG_KEY]: string;
  value: unknown;
}

/** Marks a value secret, as `pulumi config set --secret` does for stack config. */
export function secret(value: unknown): WrappedSecret {
  return { [SECRET_SIG_KEY]: SECRET_SIG_VALUE, value };
}

export function isSecret(value: unknown): value is WrappedSecret {
  return typeof value === "object" && value !== null && (value as Props)[SECRET_SIG_KEY] === SECRET_SIG_VALUE;
}

/** The value with every secret wrapping removed, at any depth. */
export function reveal(value: unknown): unknown {
  if (isSecret(value)) return reveal(value.value);
  if (Array.isArray(value)) return value.map(reveal);
  if (typeof value === "object" && value !== null) {
    const out: Props = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = reveal(v);
    return out;
  }
  return value;
}

/** True when the value is a secret or holds one anywhere inside. */
export function holdsSecret(value: unknown): boolean {
  if (isSecret(value)) return true;
  if (Array.isArray(value)) return value.some(holdsSecret);
  if (typeof value === "object" && value !== null) return Object.values(value).some(holdsSecret);
  return false;
}

/** A value for people: secrets as `[secret]`, preview unknowns as `[unknown]`. */
export function displayValue(value: unknown): unknown {
  if (isSecret(value)) return "[secret]";
  if (value === UNKNOWN) return "[unknown]";
  if (Array.isArray(value)) return value.map(displayValue);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, displayValue(v)]));
  return value;
}

/** Wraps the named properties as secrets (those not wrapped already). */
export function wrapSecrets(props: Props, names: readonly string[]): Props {
  const out: Props = { ...props };
  for (const name of names) if (name in out && !isSecret(out[name])) out[name] = secret(out[name]);
  return out;
}
