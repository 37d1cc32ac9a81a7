/**
 * Autonaming, as Pulumi's own providers name what they make: an input that names the resource in the
 * cloud (an Instance's title), left out of the program, is filled in by Check with the resource's name
 * and a random suffix (`trainer-4f2a9c1`), once. The state keeps it, and every later Check keeps the
 * state's value, so updates and replacements keep the name. Where the engine sends its autonaming
 * configuration (`pulumi:autonaming` in the stack config, native plugin only), that decides instead.
 */
import { createHash, randomBytes } from "node:crypto";
import { isUnknown, type CheckFailure } from "./check";

/** Hex digits of the random suffix, as Pulumi's providers use. */
const SUFFIX_LENGTH = 7;
const SUFFIX = new RegExp(`^[0-9a-f]{${SUFFIX_LENGTH}}$`);

export interface AutonameRule {
  /** The input that takes the name. */
  input: string;
  /** The longest name the cloud takes, in characters. */
  maxLength: number;
}

/** What Check knows of the resource it names. */
export interface Naming {
  /** The resource's name in the program (the last part of its URN); the definition's name when unknown. */
  resourceName?: string;
  /** The engine's random seed for the resource: the same suffix in a preview and the update after it. */
  seed?: Uint8Array;
  /** The engine's autonaming configuration, when it sends one. */
  engine?: { mode: "propose" | "enforce" | "disable"; proposedName: string };
}

/**
 * The name `rule.input` takes: as given, the state's, or a new one. A failure names the input when the
 * engine's configuration asks for what the cloud cannot take.
 */
export function autonamed(
  rule: AutonameRule,
  fallbackName: string,
  news: Record<string, unknown>,
  olds: Record<string, unknown>,
  naming: Naming,
): { value: unknown; failure?: CheckFailure } {
  const given = news[rule.input];
  if (given !== undefined || isUnknown(given)) return { value: given };
  const kept = olds[rule.input];
  if (typeof kept === "string" && kept !== "") return { value: kept };
  const engine = naming.engine;
  if (engine?.mode === "disable") {
    const reason = `${rule.input} is required: Pulumi's autonaming is turned off for this stack (pulumi:autonaming)`;
    return { value: undefined, failure: { property: rule.input, reason } };
  }
  if (engine && engine.proposedName !== "") {
    const fits = [...engine.proposedName].length <= rule.maxLength;
    if (fits) return { value: engine.proposedName };
    if (engine.mode === "enforce") {
      const reason = `${rule.input} must be at most ${rule.maxLength} characters, but Pulumi's autonaming (pulumi:autonaming) proposes ${JSON.stringify(engine.proposedName)}`;
      return { value: undefined, failure: { property: rule.input, reason } };
    }
  }
  return { value: defaultName(naming.resourceName ?? fallbackName, rule.maxLength, naming.seed) };
}

/**
 * `<name>-<7 hex>`, the name cut to fit `maxLength` characters. The suffix comes from the engine's seed
 * where it sends one (the native plugin), so a preview and the update after it name alike; the dynamic
 * providers get no seed, so the name a preview shows there is not the one the update writes.
 */
function defaultName(resourceName: string, maxLength: number, seed: Uint8Array | undefined): string {
  const suffix = (seed && seed.length > 0 ? createHash("sha256").update(seed).digest() : randomBytes(4))
    .toString("hex")
    .slice(0, SUFFIX_LENGTH);
  return `${headOf(resourceName, maxLength)}-${suffix}`;
}

/** Whether `name` is one this module gives the resource `resourceName` (`<name>-<7 hex>`, cut as it cuts it). */
export function isDefaultName(name: string, resourceName: string, maxLength: number): boolean {
  const head = `${headOf(resourceName, maxLength)}-`;
  return name.startsWith(head) && SUFFIX.test(name.slice(head.length));
}

function headOf(resourceName: string, maxLength: number): string {
  return cutToFit(resourceName, maxLength - SUFFIX_LENGTH - 1);
}

const GRAPHEMES = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/**
 * The longest start of `text` of whole graphemes (what a reader sees as one character: an emoji ZWJ
 * sequence, a letter with its accents) within `limit` characters as the cloud counts them (code points).
 */
function cutToFit(text: string, limit: number): string {
  let cut = "";
  let length = 0;
  for (const { segment } of GRAPHEMES.segment(text)) {
    length += [...segment].length;
    if (length > limit) break;
    cut += segment;
  }
  return cut;
}
