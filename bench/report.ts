/** The table on stdout and the targets of the performance issue, read from the records. */
import { REQUEST_LOG_CAP } from "./cloud";
import { DOORS, type EngineOperation, type EngineRecord, type EngineRun } from "./engine";
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

/** Refresh and preview --refresh of 500 instances with policies, through each door. */
function engineReadTarget(engine: EngineRun[]): TargetResult {
  const reads = DOORS.flatMap((door) =>
    (["refresh", "preview --refresh"] as const).map((operation) => ({
      door,
      operation,
      record: engineRecord(engine, door, 500, operation),
    })),
  );
  const run = reads.filter((r) => r.record !== undefined);
  return {
    target:
      "through both doors, refresh and preview --refresh of 500 instances with policies: at most 10 API calls each",
    measured:
      run.length > 0
        ? run.map((r) => `${r.operation} ${r.door} ${r.record!.apiCalls}`).join(", ")
        : "not run",
    met: run.length === reads.length ? run.every((r) => r.record!.apiCalls <= 10) : null,
  };
}

function engineRecord(
  engine: EngineRun[],
  door: string,
  n: number,
  operation: EngineOperation,
): EngineRecord | undefined {
  return engine
    .find((run) => run.door === door && run.n === n)
    ?.records.find((r) => r.operation === operation && !r.error);
}

export function targets(
  records: RunRecord[],
  engine: EngineRun[],
  summary: Summary,
  pollIntervalMs: number,
): TargetResult[] {
  const results: TargetResult[] = [engineReadTarget(engine)];
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
  const lines = aligned(header, rows);
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
    row(`floor (ceil(${p.n}/${p.parallelism}) x (${p.createLatencyMs} ms + boot))`, p.floorMs),
  ].join("\n");
}

/** The in-process scenario that does what an operation through the engine does (instances only). */
const IN_PROCESS: Record<EngineOperation, string> = {
  preview: "preview",
  up: "create",
  "preview --refresh": "refresh",
  refresh: "refresh",
  destroy: "destroy",
};

const READS: readonly EngineOperation[] = ["refresh", "preview --refresh"];

export function listCalls(r: EngineRecord): number {
  return r.byEndpoint["GET /instance/list"] ?? 0;
}

export function writes(r: EngineRecord): number {
  return Object.entries(r.byEndpoint)
    .filter(([endpoint]) => endpoint.startsWith("POST "))
    .reduce((sum, [, calls]) => sum + calls, 0);
}

export function aligned(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  return [
    pad(header, widths),
    widths.map((w) => "-".repeat(w)).join("  "),
    ...rows.map((r) => pad(r, widths)),
  ];
}

/**
 * Every operation through the engine's path beside the in-process figures of the same N (instances
 * only, no policies) and the baseline of one /instance/info per resource read; then, per N, the doors
 * side by side with the floor.
 */
export function engineTable(engine: EngineRun[], records: RunRecord[]): string {
  const header = [
    "operation",
    "door",
    "N",
    "API calls",
    "list calls",
    "writes",
    "wall ms",
    "one read per resource",
    "in-process gpucloud",
    "in-process baseline",
  ];
  const rows = engine.flatMap((run) =>
    run.records.map((r) => {
      const inProcess = (subject: string) =>
        String(find(records, IN_PROCESS[r.operation], r.n, 0, subject)?.apiCalls ?? "");
      return [
        r.operation,
        r.error ? `${r.door} (FAILED)` : r.door,
        `${r.n}+${r.n}`,
        String(r.apiCalls),
        String(listCalls(r)),
        String(writes(r)),
        String(r.wallMs),
        READS.includes(r.operation) ? String(r.steps) : "",
        inProcess("gpucloud"),
        inProcess("baseline"),
      ];
    }),
  );
  const failures = engine
    .flatMap((run) => run.records)
    .filter((r) => r.error)
    .map((r) => `FAILED ${r.operation} ${r.door} N=${r.n}: ${r.error}`);
  const byN = [...new Set(engine.map((run) => run.n))].flatMap((n) => ["", ...doorsSideBySide(engine, n)]);
  return [
    "through the engine's path (the fleet program: N Instances, each with an IdleClosePolicy; in-process figures: N instances only):",
    ...aligned(header, rows),
    ...failures,
    ...byN,
  ].join("\n");
}

function doorsSideBySide(engine: EngineRun[], n: number): string[] {
  const doors = DOORS.filter((door) => engine.some((run) => run.door === door && run.n === n));
  const cell = (door: string, show: (r: EngineRecord) => string, operation: EngineOperation) => {
    const r = engineRecord(engine, door, n, operation);
    return r ? show(r) : "not run";
  };
  const calls = (operation: EngineOperation) => (r: EngineRecord) =>
    READS.includes(operation)
      ? `${r.apiCalls} (${listCalls(r)} list)`
      : `${r.apiCalls} (${writes(r)} writes)`;
  const seconds = (door: string) =>
    (["preview", "up", "preview --refresh", "refresh", "destroy"] as const)
      .map((operation) => cell(door, (r) => (r.wallMs / 1000).toFixed(1), operation))
      .join(" / ");
  const pages = Math.ceil(n / 100);
  const row = (what: string, byDoor: (door: string) => string, floor: string) => [
    what,
    ...doors.map(byDoor),
    floor,
  ];
  const rows = [
    row("refresh: API calls", (d) => cell(d, calls("refresh"), "refresh"), `${pages} (one walk)`),
    row(
      "preview --refresh: API calls",
      (d) => cell(d, calls("preview --refresh"), "preview --refresh"),
      `${pages} (one walk)`,
    ),
    row("up: API calls", (d) => cell(d, calls("up"), "up"), "writes + one walk per poll interval"),
    row(
      "destroy: API calls",
      (d) => cell(d, calls("destroy"), "destroy"),
      "writes + one walk per poll interval",
    ),
    row("wall s: preview / up / preview --refresh / refresh / destroy", seconds, "-"),
    row(
      "provider process peak memory (MB)",
      (d) => String(engine.find((run) => run.door === d && run.n === n)?.providerPeakMemoryMb ?? "not read"),
      "-",
    ),
  ];
  return aligned([`${n} instances + ${n} policies`, ...doors.map((d) => `${d} door`), "floor"], rows);
}
