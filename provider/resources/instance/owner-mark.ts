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
 * at once: there, or the instance titled by someone else (then it is theirs, and this create makes
 * another), or still untitled. An instance whose mark cannot be written yet is still this create's: it is
 * handed to the engine at once (create-failures.ts: keptUnmarked) and the next `pulumi up` writes the
 * mark, as it repairs any title that is not what the program declares. A title the cloud refuses outright
 * will never be written, so that instance is given up (destroyed), and the refusal names the title.
 */
import { BusinessError, InputValidationError, type Instance as CloudInstance } from "../../../sdk";
import type { ProviderContext } from "../../framework/context";
import { readNow } from "./lost-create/claim";
import { instanceTiming } from "./memory";

export type Marking =
  /** The instance carries the mark (or the resource declared an empty title, and it carries none). */
  | { kind: "marked" }
  /** The instance is no longer this create's: titled by someone else, or gone. */
  | { kind: "lost"; why: string }
  /** The mark could not be written yet: the instance is this create's, untitled for now. */
  | { kind: "unwritten"; cause: unknown }
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
): Promise<Marking> {
  if (mark === "") return { kind: "marked" };
  const timing = instanceTiming(ctx);
  const uuid = instance.instance_uuid;
  const windowEnds = answeredAt + timing.markWindowMs;
  const failure = await ctx.api.instances.updateTitle(uuid, mark, { deadline: windowEnds }).then(
    () => undefined,
    (err: unknown) => err,
  );
  if (failure === undefined) return { kind: "marked" };
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
  if (failure instanceof BusinessError || failure instanceof InputValidationError)
    return { kind: "refused", cause: failure };
  return { kind: "unwritten", cause: failure };
}
