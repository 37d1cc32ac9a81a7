/**
 * In core's controls, injected faults (POST /_emulator/faults): their kinds and rules, and the table the
 * server asks on every API call.
 */
import { z } from "zod";
import { ANSWER_FAULT_KINDS } from "./answer-faults";
import { seededRandom } from "../random";

export const FAULT_KINDS = [
  "http_500",
  "http_429",
  "http_503",
  "reset",
  "drop_after_commit",
  "http_500_after_commit",
  "delay",
  "late_commit",
  ...ANSWER_FAULT_KINDS,
] as const;

/** Kinds that hold the request for `ms` real milliseconds. */
const HOLDING_KINDS: readonly string[] = ["delay", "late_commit"];

/**
 * Injected failures (POST /_emulator/faults): the next `count` calls to `path` fail this
 * way, or, with `probability`, each call fails with that probability until the fault is cleared.
 * `seed` makes a probability fault's draws repeat from run to run (tests); without it they are random.
 */
export const faultSchema = z
  .object({
    path: z.string().startsWith("/", { message: "must start with / and be relative to the API base" }),
    kind: z.enum(FAULT_KINDS, { message: `must be one of ${FAULT_KINDS.join(", ")}` }),
    count: z.int().min(1).optional(),
    probability: z.number().min(0).max(1).optional(),
    seed: z.int().min(0).max(0xffffffff).optional(),
    ms: z.int().min(0).max(600_000).optional(),
  })
  .superRefine((fault, ctx) => {
    if (fault.count !== undefined && fault.probability !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["probability"],
        message: "give either count or probability, not both",
      });
    }
    if (fault.seed !== undefined && fault.probability === undefined) {
      ctx.addIssue({ code: "custom", path: ["seed"], message: "only applies with probability" });
    }
    if (fault.kind === "late_commit" && fault.ms === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["ms"],
        message: "is required for late_commit: how long to hold the request, past the client's timeout",
      });
    }
    if (fault.ms !== undefined && !HOLDING_KINDS.includes(fault.kind)) {
      ctx.addIssue({ code: "custom", path: ["ms"], message: "only applies to delay and late_commit" });
    }
  });

export type FaultSpec = z.infer<typeof faultSchema>;

/** A fault as GET /_emulator/faults lists it: what was asked, plus how a probability fault has fared. */
export type Fault =
  | { path: string; kind: FaultSpec["kind"]; count: number; ms?: number }
  | {
      path: string;
      kind: FaultSpec["kind"];
      probability: number;
      seed?: number;
      ms?: number;
      calls: number;
      fired: number;
    };

interface Armed {
  fault: Fault;
  draw?: () => number;
}

export class FaultTable {
  private armed: Armed[] = [];

  add(spec: FaultSpec): void {
    const { path, kind, ms } = spec;
    const hold = ms === undefined ? {} : { ms };
    if (spec.probability === undefined) {
      this.armed.push({ fault: { path, kind, count: spec.count ?? 1, ...hold } });
      return;
    }
    const seed = spec.seed === undefined ? {} : { seed: spec.seed };
    this.armed.push({
      fault: { path, kind, probability: spec.probability, ...seed, ...hold, calls: 0, fired: 0 },
      draw: spec.seed === undefined ? Math.random : seededRandom(spec.seed),
    });
  }

  /**
   * The fault this call to `path` meets, if any, in the order faults were added: a counted fault
   * fires and uses one of its calls; a probability fault draws, and fires or lets the next one decide.
   */
  take(path: string): Fault | undefined {
    for (const entry of this.armed) {
      const { fault } = entry;
      if (fault.path !== path) continue;
      if ("count" in fault) {
        fault.count -= 1;
        if (fault.count <= 0) this.armed = this.armed.filter((a) => a !== entry);
        return { ...fault };
      }
      fault.calls += 1;
      if (entry.draw!() < fault.probability) {
        fault.fired += 1;
        return { ...fault };
      }
    }
    return undefined;
  }

  /** Drops the pending fault at `index` (as `list()` orders them); false when there is none. */
  remove(index: number): boolean {
    if (!Number.isInteger(index) || index < 0 || index >= this.armed.length) return false;
    this.armed.splice(index, 1);
    return true;
  }

  list(): Fault[] {
    return this.armed.map((a) => ({ ...a.fault }));
  }

  clear(): void {
    this.armed = [];
  }
}
