/**
 * The last guard on what leaves the plugin as text (error messages, init-failure reasons, log lines):
 * the API key it was configured with never appears in them, whatever a dependency put in a message.
 */
const secrets = new Set<string>();

/** Too short a secret would blank out ordinary words; a real API key is far longer. */
const SHORTEST_REDACTED = 6;

export function rememberSecret(value: string | undefined): void {
  if (value !== undefined && value.length >= SHORTEST_REDACTED) secrets.add(value);
}

export function redact(text: string): string {
  let out = text;
  for (const value of secrets) out = out.split(value).join("[secret]");
  return out;
}
