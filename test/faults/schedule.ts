/**
 * The fault suite's schedule: a seeded generator, a schedule that arms the emulator's own faults right
 * before chosen calls reach it (the emulator runs in this process), and the counting every scenario
 * reports. The world the scenarios run in is test/support/world.ts.
 */
import { seededRandom, type Emulator } from "pulumi-gpucloud/emulator";
import type { FaultTable } from "../../emulator/core/controls/faults";
import type { LoggedRequest } from "../../emulator/core/controls/requestlog";
import { onCalls, type ApiCall } from "../support/emulator-hooks";

export type FaultKind =
  | "http_500"
  | "http_429"
  | "http_503"
  | "reset"
  | "drop_after_commit"
  | "delay"
  | "html_after_commit"
  | "truncated_after_commit";

/** A fault that is more than one entry of the fault table: it arms what it needs for the call at `path`. */
export interface FaultWay {
  name: string;
  arm(table: FaultTable, path: string): void;
}

/**
 * Malformed answers to a call the cloud carried out (the emulator's answer faults): its record's
 * optional fields null, which the client reads as they are, and three answers it cannot read (a
 * gateway's HTML page with HTTP 200, JSON cut off half way, gzip without Content-Encoding), which leave
 * a create's outcome unknown, as a lost answer does.
 */
export const MALFORMED_ANSWERS = {
  nulls: "nulls_after_commit",
  html200: "html_after_commit",
  truncated: "truncated_after_commit",
  gzip: "unlabelled_gzip_after_commit",
} as const;

export type MalformedWay = keyof typeof MALFORMED_ANSWERS;

export const MALFORMED_WAYS = Object.keys(MALFORMED_ANSWERS) as MalformedWay[];

/** Each malformed answer as a way of losing a call's answer: one fault for the call at `path`. */
export function malformedWays(): Record<MalformedWay, FaultWay> {
  const way = (name: MalformedWay): FaultWay => ({
    name,
    arm: (table, path) => table.add({ path, kind: MALFORMED_ANSWERS[name], count: 1 }),
  });
  return { nulls: way("nulls"), html200: way("html200"), truncated: way("truncated"), gzip: way("gzip") };
}

/** The emulator of a fault scenario: a fleet billed for simulated hours must not run out of money half way. */
export const FAULT_EMULATOR = { balance: 1_000_000_000 };

/** A seeded generator, so every run of the suite arms the same faults in the same order. */
export const seeded = seededRandom;

const BLOCK = 20;

export interface FaultRule {
  name: string;
  matches: (call: ApiCall) => boolean;
  /** Share of matching calls that get a fault: a multiple of 1/BLOCK (0.05). */
  rate: number;
  kinds: (FaultKind | FaultWay)[];
  /** Take the kinds in turn (an even spread) instead of drawing them. */
  inTurn?: boolean;
}

export interface RuleFigures {
  calls: number;
  faults: number;
  byKind: Record<string, number>;
}

const nameOf = (kind: FaultKind | FaultWay) => (typeof kind === "string" ? kind : kind.name);

/**
 * A seeded schedule over the emulator's own fault table: right before each API call takes its fault (if
 * any), the schedule decides whether this call gets one and, if so, arms one fault of a drawn kind for
 * exactly that path with count 1 (what `POST /_emulator/faults` does). Calls matching a rule are taken in
 * blocks of BLOCK; in each block a seeded shuffle picks exactly `rate * BLOCK` of them, so the realised
 * share is the asked one (to the block) while the positions stay pseudo-random and the same every run.
 */
export class FaultSchedule {
  readonly figures = new Map<string, RuleFigures>();
  /** The kind each faulted call got, by its request-log entry. */
  readonly faulted = new Map<LoggedRequest, string>();
  private readonly undo: () => void;
  private active = true;

  constructor(emulator: Emulator, rules: FaultRule[], seed: number) {
    const random = seeded(seed);
    const blocks = new Map<string, boolean[]>();
    const turns = new Map<string, number>();
    const hit = (rule: FaultRule): boolean => {
      let block = blocks.get(rule.name);
      if (!block || block.length === 0) {
        block = Array.from({ length: BLOCK }, (_, i) => i < Math.round(rule.rate * BLOCK));
        for (let i = block.length - 1; i > 0; i--) {
          const j = Math.floor(random() * (i + 1));
          [block[i], block[j]] = [block[j], block[i]];
        }
        blocks.set(rule.name, block);
      }
      return block.pop()!;
    };
    const pick = (rule: FaultRule): FaultKind | FaultWay => {
      if (!rule.inTurn) return rule.kinds[Math.floor(random() * rule.kinds.length)];
      const turn = turns.get(rule.name) ?? 0;
      turns.set(rule.name, turn + 1);
      return rule.kinds[turn % rule.kinds.length];
    };
    const table = emulator.faults;
    for (const rule of rules) this.figures.set(rule.name, { calls: 0, faults: 0, byKind: {} });
    this.undo = onCalls(emulator, (call) => {
      const rule = this.active ? rules.find((r) => r.matches(call)) : undefined;
      if (!rule) return;
      const figures = this.figures.get(rule.name)!;
      figures.calls += 1;
      if (!hit(rule)) return;
      const kind = pick(rule);
      if (typeof kind === "string") table.add({ path: call.path, kind, count: 1 });
      else kind.arm(table, call.path);
      figures.faults += 1;
      figures.byKind[nameOf(kind)] = (figures.byKind[nameOf(kind)] ?? 0) + 1;
      this.faulted.set(call.logged, nameOf(kind));
    });
  }

  stop(): void {
    if (!this.active) return;
    this.active = false;
    this.undo();
  }

  /** "dropped=31/100 (31.0%)" style text for one rule. */
  describe(name: string): string {
    const f = this.figures.get(name)!;
    return `${f.faults}/${f.calls} (${percent(f.faults, f.calls)})`;
  }
}

function percent(part: number, whole: number): string {
  return whole === 0 ? "0%" : `${((100 * part) / whole).toFixed(1)}%`;
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/** Runs `tasks` with at most `limit` in flight; settles every one (a failure does not stop the others). */
export async function bounded<T>(
  limit: number,
  tasks: (() => Promise<T>)[],
): Promise<PromiseSettledResult<T>[]> {
  const results: PromiseSettledResult<T>[] = new Array(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const index = next++;
      try {
        results[index] = { status: "fulfilled", value: await tasks[index]() };
      } catch (reason) {
        results[index] = { status: "rejected", reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

/** Titled instances of another spec at the head of the list, and the shifting of that head. */
export class Decoys {
  private readonly live: string[] = [];
  private made = 0;
  destroyed = 0;
  added = 0;

  constructor(
    private readonly emulator: Emulator,
    private readonly user: string,
    private readonly spec: { pod_uuid: string; gpu_uuid: string; gpu_nums: number },
  ) {}

  add(): void {
    const { instance_uuid } = this.emulator.instances.createByPod(this.user, this.spec);
    this.emulator.instances.updateTitle(this.user, instance_uuid, `decoy-${this.made++}`);
    this.live.push(instance_uuid);
  }

  /**
   * Destroys the oldest decoy (the list's head), and two times in three adds one at the tail: then the
   * totals of a walk's pages agree while the instance that moved onto the page already read is skipped.
   */
  shift(): void {
    const head = this.live.shift();
    if (head === undefined) return;
    this.emulator.instances.destroy(this.user, head);
    this.destroyed++;
    if (this.destroyed % 3 !== 0) {
      this.add();
      this.added++;
    }
  }

  has(uuid: string): boolean {
    return this.live.includes(uuid);
  }
}
