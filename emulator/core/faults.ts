import { z } from "zod";

/** Injected failures (POST /_emulator/faults, DESIGN §5): the next `count` calls to `path` fail this way. */
export const faultSchema = z.object({
  path: z.string().startsWith("/", { message: "must start with / and be relative to the API base" }),
  kind: z.enum(["http_500", "http_429", "http_503", "reset", "drop_after_commit", "delay"]),
  count: z.number().int().min(1).default(1),
  ms: z.number().int().min(0).max(600_000).optional(),
});

export type Fault = z.infer<typeof faultSchema>;

export class FaultTable {
  private pending: Fault[] = [];

  add(fault: Fault): void {
    this.pending.push({ ...fault });
  }

  /** Takes one use of the first fault armed for `path`, if any. */
  take(path: string): Fault | undefined {
    const fault = this.pending.find((f) => f.path === path);
    if (!fault) return undefined;
    fault.count -= 1;
    if (fault.count <= 0) this.pending = this.pending.filter((f) => f !== fault);
    return fault;
  }

  /** Drops the pending fault at `index` (as `list()` orders them); false when there is none. */
  remove(index: number): boolean {
    if (!Number.isInteger(index) || index < 0 || index >= this.pending.length) return false;
    this.pending.splice(index, 1);
    return true;
  }

  list(): Fault[] {
    return this.pending.map((f) => ({ ...f }));
  }

  clear(): void {
    this.pending = [];
  }
}
