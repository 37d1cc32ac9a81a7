import type * as Pulumi from "@pulumi/pulumi";
import { terminalSafe } from "../../sdk";

/**
 * A by-name lookup (getGpu, getPod) could not pick exactly one entry. Its message quotes the catalogue's
 * names and titles, which a terminal would obey: their control characters are shown escaped.
 */
export class LookupError extends Error {
  override readonly name: string = "LookupError";
  /** What the catalogue offers, so callers and messages can show the choices. */
  readonly available: string[];

  constructor(message: string, available: string[]) {
    super(terminalSafe(message));
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

/**
 * The error a data source fails its `...Output` form with: its own error, reported by Pulumi once.
 * Pulumi's serializer prefixes the message of an error that passes through a resource input or a stack
 * output with `error serializing property "<name>": `, on the same error object each time it passes
 * (runtime/rpc.js), and the CLI prints the stack of any error that is not a RunError (cmd/run/run.js).
 * The error returned is made by RunError's constructor (which marks it for the CLI) and inherits from
 * the original, so `instanceof`, `name` and every field stay the data source's own; its message ignores
 * what is assigned to it, and its `cause` is the original.
 */
export function outputFailure(cause: unknown): Error {
  const original = cause instanceof Error ? cause : new Error(String(cause));
  // Loaded here, not at the top: a program that reaches this has loaded @pulumi/pulumi already, and the
  // native plugin, which shares this file but never runs it, starts without its ~770 modules.
  const pulumi = require("@pulumi/pulumi") as typeof Pulumi;
  const reported = new pulumi.RunError(original.message);
  Object.setPrototypeOf(reported, original);
  Object.defineProperty(reported, "message", {
    get: () => original.message,
    // Assigning must not throw either: the serializer's assignment runs in strict mode.
    set: () => undefined,
    enumerable: false,
  });
  Object.defineProperty(reported, "cause", { value: original, enumerable: false });
  return reported;
}
