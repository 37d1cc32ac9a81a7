/**
 * The owner's mark: the title every instance this provider makes carries from right after its create
 * answer. It is the declared `title`, or, when none is declared, the autoname Check gave the resource
 * (its name and a random suffix, kept in the state), so no instance a stack holds is left untitled.
 * Deployers that share one account tell their instances apart by it: a create whose answer was lost
 * only ever takes an instance that stayed unmarked past the grace (lost-create/timing.ts). An explicitly
 * empty title turns the mark off, and with it that protection.
 *
 * The creator sends its mark within the mark window after the answer, and a mark sent then lands before
 * any other deployer's recovery may claim the instance. A mark not confirmed in the window is looked at
 * once every attempt has settled; if it is not there, the creator claims its own instance like anyone
 * else (lost-create/claim.ts), and an instance someone else claimed first is theirs: this create makes
 * another.
 */
import { sleep, type Instance as CloudInstance } from "../../../sdk";
import type { ProviderContext } from "../../framework/context";
import { claim, newClaimantId, readNow } from "./lost-create/claim";
import { releaseClaim } from "./lost-create/pending-resolution";
import { recoveryTiming } from "./lost-create/timing";

export type Marking =
  /** The instance carries the mark (or the resource declared an empty title, and it carries none). */
  | { kind: "marked" }
  /** The instance is no longer this create's: titled by someone else, claimed, or gone. */
  | { kind: "lost"; why: string };

/**
 * Marks the instance a create call answered with (at `answeredAt`, epoch ms) as `mark`'s. Reads and
 * claims give up at `deadline`; an error means the mark could not be confirmed either way.
 */
export async function markAnswered(
  ctx: ProviderContext,
  instance: CloudInstance,
  mark: string,
  answeredAt: number,
  deadline: number,
): Promise<Marking> {
  if (mark === "") return { kind: "marked" };
  const timing = recoveryTiming(ctx.settings);
  const uuid = instance.instance_uuid;
  const windowEnds = answeredAt + timing.markWindowMs;
  const confirmed = await ctx.api.instances.updateTitle(uuid, mark, { deadline: windowEnds }).then(
    () => true,
    () => false,
  );
  if (confirmed) return { kind: "marked" };
  // Every attempt sent in the window has been carried out, or never will be, by then.
  await sleep(windowEnds + timing.settledAfterSendMs - Date.now(), ctx.signal);
  for (;;) {
    const seen = await readNow(ctx, uuid, timing, deadline);
    if (seen === undefined)
      return { kind: "lost", why: "it was destroyed before this create could title it" };
    if (seen.title === mark) return { kind: "marked" };
    if (seen.title)
      return {
        kind: "lost",
        why: `it was titled ${JSON.stringify(seen.title)} before this create could title it`,
      };
    const claimed = await claim(ctx, uuid, newClaimantId(), timing, deadline);
    if (claimed.kind === "won") {
      await releaseClaim(ctx, uuid, mark);
      return { kind: "marked" };
    }
    if (claimed.kind === "lost") return { kind: "lost", why: "another deployer's recovery claimed it first" };
    if (Date.now() >= deadline)
      throw new Error(
        `its title could not be written: every claim of it left the instance untitled until the create's deadline`,
      );
  }
}
