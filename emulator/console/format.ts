/** How the console writes statuses, times, durations and money for people. */

/**
 * Instance status names as clients use them (docs/design/live-service-notes.md#instance-life), the same words
 * the SDK
 * and the provider's statusName use; kept here because the emulator stands alone, without sdk/.
 */
const STATUS_NAMES: Readonly<Record<number, string>> = {
  0: "created",
  1: "initializing",
  2: "running",
  3: "shutting down",
  4: "stopped",
  21: "shutting down",
  22: "stopped",
  23: "stopped abnormally",
  24: "starting",
  27: "restarting",
};

export function statusName(status: number): string {
  return STATUS_NAMES[status] ?? `unknown status ${status}`;
}

/** Simulated Unix seconds as `YYYY-MM-DD HH:MM:SS` (the emulator keeps every clock in UTC). */
export function clockTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 19).replace("T", " ");
}

/** A span of simulated seconds, largest units first: `1 h 5 min`, `45 s`. */
export function duration(seconds: number): string {
  const units: [number, string][] = [
    [86400, "d"],
    [3600, "h"],
    [60, "min"],
    [1, "s"],
  ];
  const parts: string[] = [];
  let rest = Math.max(0, Math.round(seconds));
  for (const [size, name] of units) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)} ${name}`);
      rest %= size;
    }
  }
  return parts.length === 0 ? "0 s" : parts.slice(0, 2).join(" ");
}

/** When `at` is from `now`: `in 45 s`, `5 min ago` or `now`. */
export function relative(at: number, now: number): string {
  if (at === now) return "now";
  return at > now ? `in ${duration(at - now)}` : `${duration(now - at)} ago`;
}

/** A decimal amount in CNY, keeping every significant place but at least two: `2.08`, `0.00555556`. */
export function cny(amount: string | number): string {
  const text = typeof amount === "number" ? String(amount) : amount;
  const [whole, fraction = ""] = text.split(".");
  return `${whole}.${fraction.replace(/0+$/, "").padEnd(2, "0")} CNY`;
}
