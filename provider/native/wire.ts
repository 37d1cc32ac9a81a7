/**
 * Property values as they cross the ResourceProvider protocol (a protobuf Struct). The plugin tells the
 * engine it accepts secrets, so secrets arrive wrapped in the engine's signature object and must go back
 * wrapped: a property that held a secret on the way in stays secret on the way out, and the declared
 * secret outputs are wrapped here. Unknowns (preview) travel as the engine's sentinel string.
 */
import { Struct } from "google-protobuf/google/protobuf/struct_pb";

/** The signature key and value the engine wraps a secret in. */
const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";
const SECRET_SIG_VALUE = "1b47061264138c4ac30d75fd1eb44270";

export type Props = Record<string, unknown>;

/** A request's properties with secrets unwrapped, and the names of the properties that held one. */
export interface Unwrapped {
  props: Props;
  secrets: Set<string>;
}

function isWrappedSecret(value: unknown): value is { value: unknown } {
  return typeof value === "object" && value !== null && (value as Props)[SECRET_SIG_KEY] === SECRET_SIG_VALUE;
}

export function secret(value: unknown): Props {
  return { [SECRET_SIG_KEY]: SECRET_SIG_VALUE, value };
}

/** The value without its secret wrappers, and whether there was one anywhere inside it. */
function reveal(value: unknown): { value: unknown; secret: boolean } {
  if (isWrappedSecret(value)) return { value: reveal(value.value).value, secret: true };
  if (Array.isArray(value)) {
    const items = value.map(reveal);
    return { value: items.map((i) => i.value), secret: items.some((i) => i.secret) };
  }
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).map(([k, v]): [string, ReturnType<typeof reveal>] => [
      k,
      reveal(v),
    ]);
    return {
      value: Object.fromEntries(entries.map(([k, v]) => [k, v.value])),
      secret: entries.some(([, v]) => v.secret),
    };
  }
  return { value, secret: false };
}

/** A request's Struct as plain properties; a property with a secret anywhere inside counts as secret. */
export function unwrap(struct: Struct | undefined): Unwrapped {
  return unwrapSecrets((struct?.toJavaScript() ?? {}) as Props);
}

/** Properties in wire form as plain ones; a property with a secret anywhere inside counts as secret. */
export function unwrapSecrets(wire: Props): Unwrapped {
  const props: Props = {};
  const secrets = new Set<string>();
  for (const [name, raw] of Object.entries(wire)) {
    const { value, secret: isSecret } = reveal(raw);
    props[name] = value;
    if (isSecret) secrets.add(name);
  }
  return { props, secrets };
}

/** Properties as a response's Struct, the `secrets` among them wrapped. Absent (undefined) values are left out. */
export function wrap(props: Props, secrets: Iterable<string> = []): Struct {
  const hidden = new Set(secrets);
  const out: Props = {};
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined) continue;
    out[name] = hidden.has(name) ? secret(value) : value;
  }
  return Struct.fromJavaScript(JSON.parse(JSON.stringify(out)));
}

/** The value of every secret anywhere in a Struct (unwrapped), for the messages that must not show them. */
export function secretValues(struct: Struct | undefined): unknown[] {
  const found: unknown[] = [];
  const visit = (value: unknown): void => {
    if (isWrappedSecret(value)) {
      found.push(reveal(value.value).value);
    } else if (typeof value === "object" && value !== null) {
      for (const item of Object.values(value)) visit(item);
    }
  };
  visit(struct?.toJavaScript());
  return found;
}
