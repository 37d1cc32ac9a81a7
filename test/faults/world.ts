/**
 * The fault suite's world: an emulator in this process (so a seeded schedule can arm faults right before
 * each call reaches it), one dynamic-provider server with the real gpucloud providers, a background task
 * moving the frozen clock, and the counting every scenario reports.
 */
import { IdleClosePolicy, Instance, PersonalImage } from "pulumi-gpucloud";
import { GpuCloudClient } from "pulumi-gpucloud/sdk";
import { seededRandom, type Emulator, type EmulatorOptions } from "pulumi-gpucloud/emulator";
import { Harness, secret, serializedProvider, type Props } from "../harness";
import { DEMO_KEY, gpuUuid, pod, startTestEmulator, type TestEmulator } from "../emulator/helpers";

export type Kind = "Instance" | "IdleClosePolicy" | "PersonalImage";
export type FaultKind = "http_500" | "http_429" | "http_503" | "reset" | "drop_after_commit" | "delay";

let captured: Promise<Record<Kind, string>> | undefined;

/** The `__provider` text each resource class stores in state, captured once under Pulumi's mocks. */
export function providerTexts(): Promise<Record<Kind, string>> {
  captured ??= (async () => ({
    Instance: await serializedProvider(() => new Instance("i", { podUuid: "p", gpuUuid: "g", gpuNums: 1 })),
    IdleClosePolicy: await serializedProvider(
      () => new IdleClosePolicy("p", { instanceUuid: "i", idlePeriodMinutes: 10 }),
    ),
    PersonalImage: await serializedProvider(() => new PersonalImage("m", { instanceUuid: "i" })),
  }))();
  return captured;
}

/** Polls of the provider's waits: fast, since the clock moves many simulated seconds per real millisecond. */
const POLL_MS = "10";

export function providerConfig(url: string, key = DEMO_KEY): Props {
  return {
    "gpucloud:apiKey": secret(key),
    "gpucloud:baseUrl": url,
    "gpucloud:pollIntervalMs": POLL_MS,
  };
}

export async function startHarness(config: Props | undefined, env?: NodeJS.ProcessEnv): Promise<Harness> {
  return Harness.start({ providers: await providerTexts(), module: "gpucloud", config, env });
}

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

export interface FaultWorld {
  emu: TestEmulator;
  emulator: Emulator;
  h: Harness;
  /** The same cloud reached directly, for out-of-band checks (never under a fault schedule's rules). */
  api: GpuCloudClient;
  /** Instance inputs for a 1 x 4090D ComfyUI instance. */
  spec: Props;
  /** Runs `work` while a parallel task moves the frozen clock, so the provider's waits end without sleeping. */
  advancing<T>(work: Promise<T>, secondsPerStep?: number): Promise<T>;
  /** Every instance the emulator holds, of every user, from its own state (no API call, no fault). */
  cloudInstances(): string[];
  stop(): Promise<void>;
}

/** Every instance the emulator holds, read from its instances room (the snapshot is the record list). */
function instancesIn(emulator: Emulator): string[] {
  const room = emulator.rooms.find((r) => r.name === "instances");
  return ((room?.snapshot() ?? []) as { instance_uuid: string }[]).map((i) => i.instance_uuid).sort();
}

export async function startFaultWorld(options: EmulatorOptions = {}): Promise<FaultWorld> {
  // A fleet billed for simulated hours must not run out of money half way.
  const emu = await startTestEmulator({ balance: 1_000_000_000, ...options });
  const emulator = emu.running.emulator;
  const h = await startHarness(providerConfig(emu.url)).catch(async (err: unknown) => {
    await emu.close();
    throw err;
  });
  const api = new GpuCloudClient({ baseUrl: emu.url, apiKey: DEMO_KEY });
  const spec = {
    podUuid: (await pod(emu, "ComfyUI")).uuid,
    gpuUuid: await gpuUuid(emu, "4090D"),
    gpuNums: 1,
  };
  return {
    emu,
    emulator,
    h,
    api,
    spec,
    async advancing(work, secondsPerStep = 10) {
      let done = false;
      const settled = work.finally(() => (done = true));
      const ticker = (async () => {
        while (!done) {
          emu.running.advance(secondsPerStep);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      })();
      try {
        return await settled;
      } finally {
        await ticker;
      }
    },
    cloudInstances: () => instancesIn(emulator),
    async stop() {
      await api.close();
      await h.stop();
      await emu.close();
    },
  };
}
