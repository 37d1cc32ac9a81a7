/**
 * The cloud's pace as this process has seen it: the longest a create call of ours took to be carried
 * out, measured on the calls that broke the timing model (a late arrival the late watch claimed: from the
 * call's send to the first listing that showed its instance, an upper bound on when it was made). The
 * model's T is never taken below half of it (timing.ts), so 3T covers the slowest commit seen half again:
 * a cloud slower than the configured request timeout is followed for the rest of the run instead of being
 * met with one early resend after another.
 */
export class CloudPace {
  private longest = 0;

  /** The longest time from a create call's send to its instance being listed, in ms; 0 before any late arrival. */
  get longestCommitMs(): number {
    return this.longest;
  }

  /** A create call was carried out at most `ms` after its send; true when that is slower than any seen before. */
  sawCommitWithin(ms: number): boolean {
    if (ms <= this.longest) return false;
    this.longest = ms;
    return true;
  }
}
