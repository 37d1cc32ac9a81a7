/**
 * The late watch (timing.ts): a create call that the recovery judged to have made nothing (its window
 * closed on a listing that showed nothing of it) may still be carried out, by a cloud slower than the
 * model. From the moment it is judged until its create ends, the call is watched by the spec's
 * reconciler with a window that never closes: an instance of the spec created since the call went out,
 * never seen titled, untitled past the grace and won in a claim is this create's. A create under way
 * that could have made it gets it first; the watch takes only what is left.
 */
import type { Instance as CloudInstance } from "../../../../sdk";
import type { ProviderContext } from "../../../framework/context";
import type { CreateSpec } from "../create-spec";
import { newClaimantId } from "./claim";
import { watchingLate } from "./progress";
import type { Claimant, Outcome } from "./reconciler";
import type { RecoveryState } from "./state";
import type { CreateWindow } from "./window";

export interface LateArrivals {
  /** Instances the calls made after their windows, claimed: this create's. */
  claimed: CloudInstance[];
  /** Instances that could be such, whose claim could not be settled: named in a failure, never passed over. */
  unsettled: { reason: string; candidates: CloudInstance[] }[];
  /** Why the watch could not look at the end (the listing failed), when it could not. */
  unchecked?: string;
}

/** The window of a call judged to have made nothing, reopened for good: anything created since it went out. */
function reopened(window: CreateWindow): CreateWindow {
  return { start: window.start, listedBefore: window.listedBefore, closed: false, listedAtEnd: new Set() };
}

/** The late watches of one create. */
export class LateWatch {
  private readonly watches: { claimant: Claimant; outcome?: Outcome; settled: Promise<Outcome> }[] = [];
  /** Instances a watch claimed that the create has not taken. */
  private readonly claimed: CloudInstance[] = [];

  constructor(
    private readonly ctx: ProviderContext,
    private readonly state: RecoveryState,
    private readonly spec: CreateSpec,
    private readonly progress: (status: string) => void,
  ) {}

  private get reconciler() {
    return this.state.reconciler(this.ctx, this.spec);
  }

  get watching(): boolean {
    return this.watches.length > 0;
  }

  /** Watches, from now until `end`, the call sent at `sentAt` whose window was `window`. */
  watch(window: CreateWindow, sentAt: number): void {
    const claimant: Claimant = {
      id: newClaimantId(),
      window: reopened(window),
      earlierRun: false,
      settledAt: Date.now(),
      sentAt,
      giveUpAt: Infinity,
      lateWatch: true,
    };
    const watch = { claimant, settled: this.reconciler.settle(claimant) } as LateWatch["watches"][number];
    void watch.settled.then((outcome) => {
      watch.outcome = outcome;
      if (outcome.kind === "adopted") this.claimed.push(outcome.instance);
    });
    this.watches.push(watch);
  }

  /** An instance a watch has claimed so far, now the caller's (a create that holds none takes it). */
  take(): CloudInstance | undefined {
    return this.claimed.shift();
  }

  /**
   * Ends every watch (each decided on a listing begun from now, an instance it follows followed to its
   * end, what it says meanwhile told to the person waiting) and returns what they found that nobody took.
   */
  async end(): Promise<LateArrivals> {
    const open = this.watches.filter((w) => w.outcome === undefined);
    if (open.length > 0) this.progress(watchingLate());
    for (const { claimant } of open) {
      claimant.progress = this.progress;
      this.reconciler.endWatch(claimant);
    }
    const outcomes = await Promise.all(this.watches.splice(0).map((w) => w.settled));
    // The outcomes' own handlers ran first: every claimed instance is in `claimed`.
    const late: LateArrivals = { claimed: this.claimed.splice(0), unsettled: [] };
    for (const outcome of outcomes) {
      if (outcome.kind === "unknown" && outcome.candidates.length > 0)
        late.unsettled.push({ reason: outcome.reason, candidates: outcome.candidates });
      else if (outcome.kind === "unknown") late.unchecked = outcome.reason;
    }
    return late;
  }
}
