/**
 * The late watch (timing.ts): a create call that the recovery judged to have made nothing (its window
 * closed on a listing that showed nothing of it) may still have been carried out, by a cloud slower than
 * the model. At the end of the create, each such call is watched once more with a window that never
 * closes, by the spec's reconciler: an instance of the spec created since the call went out, never seen
 * titled, untitled past the grace and won in a claim is this create's. A create under way that could have
 * made it gets it first; the watch takes only what is left.
 */
import type { Instance as CloudInstance } from "../../../../sdk";
import type { ProviderContext } from "../../../framework/context";
import type { CreateSpec } from "../create-spec";
import { instanceMemory } from "../memory";
import { newClaimantId } from "./claim";
import type { CreateWindow } from "./window";

export interface LateArrivals {
  /** Instances the calls made after their windows, claimed: this create's. */
  claimed: CloudInstance[];
  /** Instances that could be such, whose claim could not be settled: named in a failure, never passed over. */
  unsettled: { reason: string; candidates: CloudInstance[] }[];
  /** Why the watch could not look at all (the listing failed), when it could not. */
  unchecked?: string;
}

/** The window of a call judged to have made nothing, reopened for good: anything created since it went out. */
export function reopened(window: CreateWindow): CreateWindow {
  return { start: window.start, listedBefore: window.listedBefore, closed: false, listedAtEnd: new Set() };
}

/** Watches the calls whose windows are `windows` (reopened), reporting what it waits for to `progress`. */
export async function watchLateArrivals(
  ctx: ProviderContext,
  spec: CreateSpec,
  windows: readonly CreateWindow[],
  progress: (status: string) => void,
): Promise<LateArrivals> {
  const reconciler = instanceMemory(ctx.process).reconciler(ctx, spec);
  const now = Date.now();
  const outcomes = await Promise.all(
    windows.map((window) =>
      reconciler.settle({
        id: newClaimantId(),
        window: reopened(window),
        earlierRun: false,
        settledAt: now,
        giveUpAt: now,
        lateWatch: true,
        progress,
      }),
    ),
  );
  const late: LateArrivals = { claimed: [], unsettled: [] };
  for (const outcome of outcomes) {
    if (outcome.kind === "adopted") late.claimed.push(outcome.instance);
    else if (outcome.kind === "unknown" && outcome.candidates.length > 0)
      late.unsettled.push({ reason: outcome.reason, candidates: outcome.candidates });
    else if (outcome.kind === "unknown") late.unchecked = outcome.reason;
  }
  return late;
}
