/**
 * Progress while the engine works: a line per finished step, and for instances that are starting or
 * stopping, their status as the cloud reports it. On a terminal the status lines are redrawn in place
 * with a spinner; otherwise each status change is printed once, so logs stay readable.
 */
import { instanceStatusName, type GpuCloudClient } from "../sdk";
import { typeName, type EngineEvent, type Step } from "../testing";
import type { Style } from "./render";

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const POLL_MS = 150;
/** An Instance through either front door (`pulumi-nodejs:dynamic/gpucloud:Instance`, `gpucloud:index:Instance`). */
const INSTANCE = "gpucloud:Instance";

interface Watched {
  step: Step;
  since: number;
  status?: string;
}

export class Progress {
  private readonly watched = new Map<string, Watched>();
  private drawn = 0;
  private frame = 0;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    private readonly write: (text: string) => void,
    private readonly tty: boolean,
    private readonly api: GpuCloudClient,
    private readonly s: Style,
  ) {}

  /** A line that stays (printed above the live status lines). */
  line(text: string): void {
    this.clear();
    this.write(`${text}\n`);
    this.draw();
  }

  /** Feeds the engine's events: instance steps are watched until they finish. */
  readonly onEvent = (event: EngineEvent): void => {
    if (event.kind === "late-failure") return;
    const { step } = event;
    if (event.kind === "step-start") {
      if (typeName(step.type) === INSTANCE && step.op !== "delete") {
        this.watched.set(step.urn, { step, since: Date.now() });
        this.ensureTicking();
      }
      return;
    }
    this.watched.delete(step.urn);
    if (event.kind === "step-done") {
      const verb = { create: "created", update: "updated", replace: "replaced", delete: "deleted", same: "" }[
        step.op
      ];
      this.line(
        this.s.op(step.op, `  ${typeName(step.type)} ${step.name} ${verb} (${seconds(event.durationMs)})`),
      );
    } else {
      this.line(`  ${typeName(step.type)} ${step.name}: ${event.error.message}`);
    }
    if (this.watched.size === 0) this.stopTicking();
  };

  stop(): void {
    this.stopTicking();
    this.clear();
    this.watched.clear();
  }

  private ensureTicking(): void {
    this.timer ??= setInterval(() => void this.tick(), POLL_MS);
  }

  private stopTicking(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.clear();
  }

  private async tick(): Promise<void> {
    this.frame++;
    if (!this.polling) {
      this.polling = true;
      try {
        await this.poll();
      } catch {
        // Progress is best effort: a failed poll only leaves the status as it was.
      } finally {
        this.polling = false;
      }
    }
    if (this.tty) {
      this.clear();
      this.draw();
    }
  }

  /** The cloud's view of each watched instance: by id when the step has one, else by title (= resource name). */
  private async poll(): Promise<void> {
    if (this.watched.size === 0) return;
    const { instance_list } = await this.api.instances.list({ page: 1, page_size: 100 });
    for (const w of this.watched.values()) {
      const found = instance_list.find((i) =>
        w.step.id ? i.instance_uuid === w.step.id : i.title === w.step.name,
      );
      const status = found ? `${instanceStatusName(found.status)} (status ${found.status})` : "requested";
      if (status !== w.status && !this.tty) this.write(this.s.dim(`    ${w.step.name}: ${status}\n`));
      w.status = status;
    }
  }

  private draw(): void {
    if (!this.tty || this.timer === undefined) return;
    const spinner = SPINNER[this.frame % SPINNER.length];
    const lines = [...this.watched.values()].map(
      (w) =>
        `  ${spinner} ${w.step.name}  ${w.status ?? "requested"}  ${this.s.dim(seconds(Date.now() - w.since))}`,
    );
    for (const l of lines) this.write(`${l}\n`);
    this.drawn = lines.length;
  }

  private clear(): void {
    if (!this.tty || this.drawn === 0) return;
    this.write(`\x1b[${this.drawn}A\x1b[0J`);
    this.drawn = 0;
  }
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}
