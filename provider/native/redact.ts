/**
 * The last guard on what leaves the plugin as text (error messages, check and argument failures,
 * init-failure reasons, log lines): the API key it was configured with, and every value the request of
 * the call marked secret, never appear in them, whatever a resource, the SDK or a dependency put in a
 * message ("pod <uuid> not found"). Each is replaced by "[secret]".
 */
const secrets = new Set<string>();

/** Too short a secret would blank out ordinary words; a real API key is far longer. */
const SHORTEST_REDACTED = 6;

/**
 * A secret input of one call is hidden from 4 characters on: its uuids and tags are longer, and a
 * shorter value (a secret `gpuNums` of 2) would blank out every digit of the message.
 */
const SHORTEST_INPUT_REDACTED = 4;

export function rememberSecret(value: string | undefined): void {
  if (value !== undefined && value.length >= SHORTEST_REDACTED) secrets.add(value);
}

/**
 * The texts a message could show of secret values: each as text (a number as its digits), an object or
 * array also as JSON and by each of its leaves, and a string also as it reads inside JSON.
 */
export function secretTexts(values: Iterable<unknown>): string[] {
  const texts = new Set<string>();
  const add = (text: string) => {
    if (text.length < SHORTEST_INPUT_REDACTED) return;
    texts.add(text);
    const quoted = JSON.stringify(text).slice(1, -1);
    if (quoted !== text) texts.add(quoted);
  };
  const visit = (value: unknown): void => {
    if (value === null || value === undefined) return;
    if (typeof value === "object") {
      add(JSON.stringify(value));
      for (const item of Object.values(value)) visit(item);
      return;
    }
    add(String(value));
  };
  for (const value of values) visit(value);
  return [...texts];
}

/** The text with the API key and each of `hidden` (texts from `secretTexts`) replaced by "[secret]". */
export function redact(text: string, hidden: readonly string[] = []): string {
  // Longest first: a secret that contains another is hidden whole.
  const all = [...secrets, ...hidden].sort((a, b) => b.length - a.length);
  let out = text;
  for (const value of all) out = out.split(value).join("[secret]");
  return out;
}
