/** The table on stdout and the targets of the performance issue, read from the records. */
import { REQUEST_LOG_CAP } from "./cloud";
import type { EmulatorThroughput, ParallelCreateFigure, SerializedProviderFigure } from "./figures";
import type { RunRecord } from "./scenarios";

export interface Summary {
  serializedProvider: SerializedProviderFigure;
  checkMsFor1000Inputs: number;
  emulatorThroughput: EmulatorThroughput;
  parallelCreate: ParallelCreateFigure;
}

export interface TargetResult {
  target: string;
  measured: string;
  /** null when the runs it needs were not part of this bench. */
  met: boolean | null;
}

function find(records: RunRecord[], scenario: string, n: number, rateLimit: number, subject: string) {
  return records.find(
    (r) =>
      r.scenario === scenario && r.n === n && r.rateLimit === rateLimit && r.subject === subject && !r.error,
  );
}

const ratio = (baseline: number, ours: number): string =>
  ours === 0 ? (baseline === 0 ? "=" : "∞") : `${(baseline / ours).toFixed(1)}x`;

/** "4.5x fewer" or "1.3x more", "3.6x faster" or "4.2x slower": the ratio read in its own direction. */
function compared(baseline: number, ours: number, better: string, worse: string): string {
  if (ours === baseline) return "=";
  return ours < baseline ? `${ratio(baseline, ours)} ${better}` : `${ratio(ours, baseline)} ${worse}`;
}

/** Polls of a create: list walks and info reads (the one listing taken before the creates included). */
function pollingCalls(r: RunRecord): number {
  return (r.byEndpoint["GET /instance/list"] ?? 0) + (r.byEndpoint["GET /instance/info"] ?? 0);
}

export function targets(records: RunRecord[], summary: Summary, pollIntervalMs: number): TargetResult[] {
  const results: TargetResult[] = [];
  const refresh500 = find(records, "refresh", 500, 0, "gpucloud");
  const refresh500Base = find(records, "refresh", 500, 0, "baseline");
  results.push({
    target: "refresh of 500 instances: at most 10 API calls (baseline 500)",
    measured: refresh500
      ? `${refresh500.apiCalls} calls (baseline ${refresh500Base?.apiCalls ?? "not run"})`
      : "not run",
    met: refresh500 ? refresh500.apiCalls <= 10 : null,
  });
  const create100 = find(records, "create", 100, 0, "gpucloud");
  const intervals = create100 ? Math.ceil(create100.wallMs / pollIntervalMs) : 0;
  results.push({
    target: "create and wait of 100: polling calls at most one list walk per poll interval",
    measured: create100
      ? `${pollingCalls(create100)} list/info calls over ${intervals} poll intervals of ${pollIntervalMs} ms (one walk is one page at N=100; one more walk is the listing taken before the creates)`
      : "not run",
    met: create100 ? pollingCalls(create100) <= intervals + 1 : null,
  });
  const limited = find(records, "refresh", 500, 10, "gpucloud");
  const limitedBase = find(records, "refresh", 500, 10, "baseline");
  results.push({
    target: "refresh of 500 under --rate-limit 10: at least 20x faster than the baseline",
    measured:
      limited && limitedBase
        ? `${limited.wallMs} ms vs ${limitedBase.wallMs} ms: ${ratio(limitedBase.wallMs, limited.wallMs)}`
        : "not run",
    met: limited && limitedBase ? limitedBase.wallMs >= 20 * limited.wallMs : null,
  });
  const { bytesPerCopy, bytesPerResource } = summary.serializedProvider;
  results.push({
    target: "serialized provider: at most 2,500 bytes per resource",
    measured: `installed package: ${bytesPerCopy} bytes per copy, stored twice: ${bytesPerResource} bytes per resource`,
    met: bytesPerResource <= 2500,
  });
  results.push({
    target: "check() of 1,000 resource inputs under 200 ms",
    measured: `${summary.checkMsFor1000Inputs} ms`,
    met: summary.checkMsFor1000Inputs < 200,
  });
  const p = summary.parallelCreate;
  results.push({
    target: `create and wait of ${p.n} with ${p.createLatencyMs} ms create calls: ${p.parallelism} at a time at least 8x faster than one at a time`,
    measured: `${p.parallelMs} ms vs ${p.serialMs} ms: ${ratio(p.serialMs, p.parallelMs)} (floor ${p.floorMs} ms)`,
    met: p.serialMs >= 8 * p.parallelMs,
  });
  return results;
}

function pad(cells: string[], widths: number[]): string {
  return cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
}

export function table(records: RunRecord[]): string {
  const header = [
    "scenario",
    "subject",
    "N",
    "rate limit",
    "API calls",
    "429s",
    "wall ms",
    "calls vs base",
    "time vs base",
  ];
  const atLeast = (r: RunRecord) => (r.apiCalls >= REQUEST_LOG_CAP ? "≥" : "");
  const rows = records.map((r) => {
    const base = find(records, r.scenario, r.n, r.rateLimit, "baseline");
    const compare = r.subject === "gpucloud" && base && !r.error;
    return [
      r.scenario,
      r.error ? `${r.subject} (FAILED)` : r.subject,
      String(r.n),
      r.rateLimit === 0 ? "off" : `${r.rateLimit}/s`,
      `${atLeast(r)}${r.apiCalls}`,
      `${atLeast(r)}${r.http429}`,
      String(r.wallMs),
      compare ? `${atLeast(base)}${compared(base.apiCalls, r.apiCalls, "fewer", "more")}` : "",
      compare ? compared(base.wallMs, r.wallMs, "faster", "slower") : "",
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const lines = [
    pad(header, widths),
    widths.map((w) => "-".repeat(w)).join("  "),
    ...rows.map((r) => pad(r, widths)),
  ];
  const failures = records
    .filter((r) => r.error)
    .map((r) => `FAILED ${r.scenario} ${r.subject} N=${r.n} rate limit ${r.rateLimit}: ${r.error}`);
  const capped = records.some((r) => atLeast(r))
    ? [
        `≥: the emulator's request log keeps the last ${REQUEST_LOG_CAP} requests, so these counts are lower bounds`,
      ]
    : [];
  return [...lines, ...failures, ...capped].join("\n");
}

export function summaryText(summary: Summary, results: TargetResult[]): string {
  const t = summary.emulatorThroughput;
  return [
    `serialized provider: ${summary.serializedProvider.bytesPerCopy} bytes per copy, ${summary.serializedProvider.bytesPerResource} bytes per resource in state (installed package; ${summary.serializedProvider.linkedBytesPerCopy} per copy through a symlink)`,
    `check() of 1,000 Instance inputs: ${summary.checkMsFor1000Inputs} ms`,
    `emulator alone (${t.concurrency} concurrent clients): ${t.infoPerSecond} info/s, ${t.listPagesPerSecond} list pages of 100/s`,
    parallelCreateText(summary.parallelCreate),
    "",
    "targets:",
    ...results.map(
      (r) => `  [${r.met === null ? "not run" : r.met ? "met" : "MISSED"}] ${r.target}: ${r.measured}`,
    ),
  ].join("\n");
}

function parallelCreateText(p: ParallelCreateFigure): string {
  const row = (how: string, ms: number) => `  ${how.padEnd(22)} ${String(ms).padStart(8)} ms`;
  return [
    `create and wait of ${p.n}, each create call held ${p.createLatencyMs} ms, no rate limit:`,
    row(`${p.parallelism} at a time`, p.parallelMs),
    row("one at a time", p.serialMs),
    row(`floor (${p.createLatencyMs} ms x ceil(${p.n}/${p.parallelism}) + boot)`, p.floorMs),
  ].join("\n");
}
