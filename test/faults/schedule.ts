/**
 * The fault suite's schedule: a seeded generator, a schedule that arms the emulator's own faults right
 * before chosen calls reach it (the emulator runs in this process), and the counting every scenario
 * reports. The world the scenarios run in is test/support/world.ts.
 */
import { seededRandom, type Emulator } from "pulumi-gpucloud/emulator";

export type FaultKind = "http_500" | "http_429" | "http_503" | "reset" | "drop_after_commit" | "delay";

/** The emulator of a fault scenario: a fleet billed for simulated hours must not run out of money half way. */
export const FAULT_EMULATOR = { balance: 1_000_000_000 };

/** A seeded generator, so every run of the suite arms the same faults in the same order. */
export const seeded = seededRandom;

const BLOCK = 20;

export interface FaultRule {
  name: string;
  matches: (path: string) => boolean;
  /** Share of matching calls that get a fault: a multiple of 1/BLOCK (0.05). */
  rate: number;
  kinds: FaultKind[];
}

export interface RuleFigures {
  calls: number;
  faults: number;
  byKind: Partial<Record<FaultKind, number>>;
}

/**
 * A seeded schedule over the emulator's own fault table: right before each API call takes its fault (if
 * any), the schedule decides whether this call gets one and, if so, arms one fault of a drawn kind for
 * exactly that path with count 1 (what `POST /_emulator/faults` does). Calls matching a rule are taken in
 * blocks of BLOCK; in each block a seeded shuffle picks exactly `rate * BLOCK` of them, so the realised
 * share is the asked one (to the block) while the positions stay pseudo-random and the same every run.
 */
export class FaultSchedule {
  readonly figures = new Map<string, RuleFigures>();
  private readonly restore: () => void;
  private active = true;

  constructor(emulator: Emulator, rules: FaultRule[], seed: number) {
    const random = seeded(seed);
    const blocks = new Map<string, boolean[]>();
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
    const table = emulator.faults;
    const take = table.take.bind(table);
    for (const rule of rules) this.figures.set(rule.name, { calls: 0, faults: 0, byKind: {} });
    table.take = (path: string) => {
      const rule = this.active ? rules.find((r) => r.matches(path)) : undefined;
      if (rule) {
        const figures = this.figures.get(rule.name)!;
        figures.calls += 1;
        if (hit(rule)) {
          const kind = rule.kinds[Math.floor(random() * rule.kinds.length)];
          table.add({ path, kind, count: 1 });
          figures.faults += 1;
          figures.byKind[kind] = (figures.byKind[kind] ?? 0) + 1;
        }
      }
      return take(path);
    };
    this.restore = () => {
      table.take = take;
    };
  }

  stop(): void {
    this.active = false;
    this.restore();
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
