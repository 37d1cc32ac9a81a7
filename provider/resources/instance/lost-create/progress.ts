/**
 * What a person running `pulumi up` reads while a lost create answer is settled: what the recovery waits
 * for and until when. A lost answer can cost minutes at the default request timeout (the grace and the
 * claim are counted in request timeouts: timing.ts), and a wait that long must say why.
 */
import { formatWait } from "../../../../sdk/answers";

/** "1.5 s": a bound of the timing model, to the tenth of a second. */
export function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/** "until 14:03:05 (about 2 min)", on this machine's clock: what the person watching reads. */
export function until(epochMs: number): string {
  const at = new Date(epochMs).toTimeString().slice(0, 8);
  return `until ${at} (about ${formatWait(Math.max(0, epochMs - Date.now()))})`;
}

/** The call may still be carried out, so absence cannot be told yet. */
export function awaitingSettle(settledAt: number): string {
  return (
    `waiting for the instance list to show whether the cloud made the instance: the cloud may still carry ` +
    `the call out ${until(settledAt)}`
  );
}

/** Candidates appeared; they are taken only once no deployer that got its create answer can still title them. */
export function awaitingGrace(uuids: string[], graceEnds: number, claimTakes: number): string {
  return (
    `instance ${uuids.join(", ")} appeared untitled; it is claimed once no other deployer that got its create ` +
    `answer can still title it, ${until(graceEnds)}, and the claim is decided about ${formatWait(claimTakes)} after that`
  );
}

export function claiming(uuid: string, decidedBy: number): string {
  return `claiming instance ${uuid}, which appeared untitled: decided ${until(decidedBy)}`;
}

export function listingFails(why: string, giveUpAt: number): string {
  return `${why}; reading it again ${until(giveUpAt)}, after which the stack records a pending create`;
}

/** The late watch (create.ts): a call judged to have made nothing may have been carried out late after all. */
export function watchingLate(): string {
  return "checking that no create call judged to have made nothing was carried out late after all";
}
