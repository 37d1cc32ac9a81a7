/** A by-name lookup (getGpu, getPod) could not pick exactly one entry. */
export class LookupError extends Error {
  override readonly name: string = "LookupError";
  /** What the catalogue offers, so callers and messages can show the choices. */
  readonly available: string[];

  constructor(message: string, available: string[]) {
    super(message);
    this.available = available;
  }
}

/** Nothing in the catalogue matches the requested name or tag. */
export class NoMatchError extends LookupError {
  override readonly name = "NoMatchError";
}

/** Several catalogue entries match the requested name. */
export class AmbiguousMatchError extends LookupError {
  override readonly name = "AmbiguousMatchError";
}

const LISTED_AT_MOST = 25;

/** `a, b, c` for messages; a long catalogue is cut short with a count of what was left out. */
export function listForMessage(items: readonly string[]): string {
  if (items.length === 0) {
    return "(none)";
  }
  const shown = items.slice(0, LISTED_AT_MOST).join(", ");
  const rest = items.length - LISTED_AT_MOST;
  return rest > 0 ? `${shown} and ${rest} more` : shown;
}
