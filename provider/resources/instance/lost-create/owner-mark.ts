/**
 * The owner's mark: the title every instance this provider makes carries from right after its create
 * answer. It is the declared `title`, or, when none is declared, the autoname Check gave the resource
 * (its name and a random suffix, kept in the state), so no instance a stack holds is left untitled.
 * Deployers that share one account tell their instances apart by it: a create whose answer was lost
 * only ever takes an instance that stayed unmarked past the grace (lost-create/timing.ts). An explicitly
 * empty title turns the mark off, and with it that protection.
 *
 * The creator sends its mark within the mark window after the answer, and a mark sent then lands before
 * any other deployer's recovery may claim the instance. A mark not confirmed in the window is read back
 * once every attempt has settled:
 * there, or the instance titled by someone else (then it is theirs, and this create makes another), or
 * still untitled. Still untitled, the creator claims it once, like any deployer would
 * (lost-create/claim.ts): won, it writes the mark; lost, the instance is someone else's. A claim whose own
 * writes do not land either leaves the instance still this create's: it is handed to the engine
 * (create-failures.ts: keptUnmarked) and the next `pulumi up` writes the mark, as it repairs any title
 * that is not what the program declares. A title the cloud refuses outright will never be written, so
 * that instance is given up (destroyed), and the refusal names the title.
 */
import { BusinessError, InputValidationError, sleep, type Instance as CloudInstance } from "../../../../sdk";
import type { ProviderContext } from "../../../framework/context";
import { claim, newClaimantId, readNow } from "./claim";
import { releaseClaim } from "./pending-resolution";
import { claimMs, type RecoveryTiming } from "./timing";

export type Marking =
  /** The instance carries the mark (or the resource declared an empty title, and it carries none). */
  | { kind: "marked" }
  /** The instance is no longer this create's: titled by someone else, or gone. */
  | { kind: "lost"; why: string }
  /**
   * The mark could not be written yet: the instance is this create's, untitled for now (or bearing the
   * creator's own claim token: `seen` is then the instance as it was last read).
   */
  | { kind: "unwritten"; cause: unknown; seen?: CloudInstance }
  /** The cloud refused the title itself: no write of it will ever land. */
  | { kind: "refused"; cause: Error };

/**
 * Marks the instance a create call answered with (at `answeredAt`, epoch ms) as `mark`'s. Every write is
 * sent within the mark window; the read that settles an unconfirmed one gives up at `deadline`.
 */
export async function markAnswered(
  ctx: ProviderContext,
  instance: CloudInstance,
  mark: string,
  answeredAt: number,
  deadline: number,
  timing: RecoveryTiming,
): Promise<Marking> {
  if (mark === "") return { kind: "marked" };
  const uuid = instance.instance_uuid;
  const windowEnds = answeredAt + timing.markWindowMs;
  const failure = await ctx.api.instances.updateTitle(uuid, mark, { deadline: windowEnds }).then(
    () => undefined,
    (err: unknown) => err,
  );
  if (failure === undefined) return { kind: "marked" };
  const refused = failure instanceof BusinessError || failure instanceof InputValidationError;
  // Every attempt sent in the window has been carried out, or never will be, by then: a read sooner could
  // miss a mark still in flight, and a claim over it would take this create's own instance for another's.
  // A refusal needs no such wait: it is the cloud's answer to this very title, and the instance it leaves
  // untitled is destroyed whatever an attempt still in flight would have done.
  if (!refused) await sleep(windowEnds + timing.settledAfterSendMs - Date.now(), ctx.signal);
  // A read's own attempts may take a request timeout each: one read, then the instance goes to the engine.
  const seen = await readNow(ctx, uuid, timing, Math.min(deadline, Date.now() + 2 * timing.requestMs)).catch(
    (err: unknown) => ({ unreadable: err }),
  );
  if (seen === undefined) return { kind: "lost", why: "it was destroyed before this create could title it" };
  if ("unreadable" in seen) return { kind: "unwritten", cause: failure };
  if (seen.title === mark) return { kind: "marked" };
  if (seen.title)
    return {
      kind: "lost",
      why: `it was titled ${JSON.stringify(seen.title)} before this create could title it`,
    };
  // Refused, and the instance is there and untitled: it is the title the cloud will not take.
  if (refused) return { kind: "refused", cause: failure };
  return claimOwn(ctx, uuid, mark, failure, deadline, timing);
}

/** One claim of the creator's own instance, its mark unwritten (see above); never a loop of them. */
async function claimOwn(
  ctx: ProviderContext,
  uuid: string,
  mark: string,
  failure: unknown,
  deadline: number,
  timing: RecoveryTiming,
): Promise<Marking> {
  const claimDeadline = Math.min(deadline, Date.now() + claimMs(timing));
  const claimed = await claim(ctx, uuid, newClaimantId(), timing, claimDeadline).catch(() => undefined);
  if (claimed?.kind === "lost") {
    // A mark of ours carried out later than the model allows is what the claim met: the instance is ours.
    const after = await readNow(ctx, uuid, timing, claimDeadline).catch(() => undefined);
    if (after?.title === mark) return { kind: "marked" };
    return { kind: "lost", why: "another deployer's recovery claimed it first" };
  }
  if (claimed?.kind !== "won") return { kind: "unwritten", cause: failure };
  return releaseClaim(ctx, uuid, mark).then(
    (): Marking => ({ kind: "marked" }),
    (err: unknown): Marking => ({ kind: "unwritten", cause: err, seen: claimed.instance }),
  );
}
