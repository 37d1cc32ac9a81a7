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

/** "14:03:05", on this machine's clock: what the person watching reads. */
function clock(epochMs: number): string {
  return new Date(epochMs).toTimeString().slice(0, 8);
}

/** "until 14:03:05 (about 2 min)". */
export function until(epochMs: number): string {
  return `until ${clock(epochMs)} (about ${formatWait(Math.max(0, epochMs - Date.now()))})`;
}

/**
 * Reports `prefix` and each status to `report`, only when it says something new: a status whose only
 * change is its "(about ...)" countdown is not said again every round.
 */
export function statusReporter(report: (message: string) => void, prefix: string): (status: string) => void {
  let last: string | undefined;
  return (status) => {
    const message = `${prefix}${status}.`;
    const said = message.replace(/ \(about [^)]*\)/g, "");
    if (said === last) return;
    last = said;
    report(message);
  };
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
    `answer can still title it, ${until(graceEnds)}, and a claim takes up to ${formatWait(claimTakes)}`
  );
}

export function claiming(uuid: string, decidedBy: number): string {
  return `claiming instance ${uuid}, which appeared untitled: decided by ${clock(decidedBy)} at the latest`;
}

/** Nothing was made, so the create is sent again. */
export function sendingAgain(): string {
  return "the instance list shows it made nothing (the call can no longer be carried out); sending the create again";
}

export function listingFails(why: string, giveUpAt: number): string {
  return `${why}; reading it again ${until(giveUpAt)}, after which the stack records a pending create`;
}

/** The late watch (create-recovery.ts): a call judged to have made nothing may have been carried out late after all. */
export function watchingLate(): string {
  return "checking that no create call judged to have made nothing was carried out late after all";
}
