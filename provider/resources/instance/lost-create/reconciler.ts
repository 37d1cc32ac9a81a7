/**
 * Finding out what a create whose answer was lost made. The create call takes no idempotency key, so
 * the only evidence is the instance list: an instance of the create's spec, made inside its window
 * (window.ts), that no live deployer will still mark. One reconciler per spec (per provider process)
 * serves every create of that spec whose outcome is unknown, the lost attempts of this run and the
 * pending records of earlier runs alike: instances of one spec are interchangeable until they are
 * marked, so they are matched by window and count, not by identity.
 *
 * The ownership rule it keeps: every instance this provider makes carries its owner's mark (the
 * resource's title) from right after its create answer (owner-mark.ts). So an instance is a candidate
 * only while it is unmarked, and may be claimed only once it has been seen unmarked for the grace
 * (timing.ts): by then any creator that got its answer has marked it. An instance a create of this
 * process answered for, or a state of this process holds, is never a candidate (taken.ts).
 *
 * Each round (a poll interval, at least a quarter of the request timeout) it reads a fresh listing and
 * applies:
 * - the grace, counted from when this process first saw the instance unmarked;
 * - an instance ever seen titled is someone's, whatever its title later: a person may clear the title of
 *   an instance a live stack holds, and that stack had its create answer;
 * - the claim (claim.ts) before anything is adopted, candidates given out by a maximum matching of
 *   windows (matching.ts), oldest first, the creates under way before the late watches (timing.ts);
 * - absence only from two consecutive consistent listings that agree, once the call has settled: a
 *   create and a delete between two pages can keep a listing consistent while hiding an instance;
 * - an instance that appeared is followed to its end (grace and claim), whatever the create's deadline:
 *   giving up on it would record a pending create for an instance the cloud shows.
 * Each claimant hears, as it changes, what its outcome waits for and until when (progress.ts).
 */
import { isTransientError, sleep, type Instance as CloudInstance } from "../../../../sdk";
import { warn, type ProviderContext } from "../../../framework/context";
import { messageOf } from "../../../framework/errors";
import {
  describeDifference,
  describeSpec,
  matchesSpec,
  specDifferences,
  specKey,
  type CreateSpec,
} from "../create-spec";
import type { InstanceReads, Walk } from "../reads";
import { claim, claimPrefix, isClaimToken } from "./claim";
import { maximumMatching } from "./matching";
import type { CloudPace } from "./pace";
import * as progress from "./progress";
import type { TakenInstances } from "./taken";
import { adoptionMs, claimMs, recoveryTiming, type RecoveryTiming } from "./timing";
import { closedBy, inWindow, type CreateWindow } from "./window";

/** A create whose outcome is unknown: a lost attempt of this run, or a pending record of an earlier one. */
export interface Claimant {
  /** 8 hex: names its claim tokens and its pending record. */
  id: string;
  window: CreateWindow;
  /** Its window comes from a state: what was listed before the call is known only in part. */
  earlierRun: boolean;
  /** Epoch ms: from then, the call has been carried out or never will be (later if the cloud shows itself slower). */
  settledAt: number;
  /** When the call was sent (epoch ms); undefined for a record of an earlier run. */
  sentAt?: number;
  /** Then (epoch ms) the outcome is left unknown, unless an instance that appeared is still followed. */
  giveUpAt: number;
  /**
   * A late watch (timing.ts): a call already judged to have made nothing, watched with a window that
   * never closes for an instance it made after all. It takes only what no create under way can have made.
   */
  lateWatch?: boolean;
  /** Hears what the outcome waits for and until when, each time that changes. */
  progress?(status: string): void;
}

export type Outcome =
  | { kind: "adopted"; instance: CloudInstance }
  /** `nearMisses`: instances of the same source in the window that differ in the fields named. */
  | { kind: "not-made"; nearMisses: string[] }
  | {
      kind: "unknown";
      reason: string;
      candidates: CloudInstance[];
      window: CreateWindow;
      /** What the last listing showed: a pending record keeps what of it a later run needs. */
      listed: CloudInstance[];
    };

interface Entry {
  claimant: Claimant;
  resolve(outcome: Outcome): void;
  /** The candidate being claimed for it, if any. */
  claiming?: string;
  /** Why its outcome is not known yet, and what it could be: what a pending record reports. */
  reason: string;
  candidates: CloudInstance[];
  /** Consistent listings read since its window closed (a late watch's: since it began): the absence rule needs two. */
  listingsSinceClosed: number;
  /** A late watch that was ended then (epoch ms): it is decided on a listing begun from then. */
  watchEndedAt?: number;
}

const byAge = (instances: CloudInstance[]) =>
  [...instances].sort((a, b) => (a.create_time ?? 0) - (b.create_time ?? 0));
const byWindow = (entries: Entry[]) =>
  [...entries].sort((a, b) => (a.claimant.window.start ?? 0) - (b.claimant.window.start ?? 0));

/** Unmarked: no title, or a claim token (a claim under way, which may still fail and leave it to us). */
function unmarked(instance: CloudInstance): boolean {
  return !instance.title || isClaimToken(instance.title);
}

class Reconciler {
  /** The timing model as it stands: the settings, and the pace the cloud has shown (it may slow down). */
  private get timing(): RecoveryTiming {
    return recoveryTiming(this.ctx.settings, this.pace.longestCommitMs);
  }

  private readonly entries = new Set<Entry>();
  /** When each unmarked instance of the spec was first seen unmarked (epoch ms, as its listing ended). */
  private readonly firstSeen = new Map<string, number>();
  private readonly claiming = new Set<string>();
  private previous: Walk | undefined;
  private lastListed: CloudInstance[] = [];
  private running = false;

  constructor(
    private readonly ctx: ProviderContext,
    private readonly spec: CreateSpec,
    private readonly reads: InstanceReads,
    private readonly taken: TakenInstances,
    private readonly pace: CloudPace,
  ) {}

  /** Resolves once the claimant's outcome is decided: adopted (claimed), not made, or unknown. */
  settle(claimant: Claimant): Promise<Outcome> {
    return new Promise((resolve) => {
      this.entries.add({
        claimant,
        resolve,
        reason: "no listing was read yet",
        candidates: [],
        listingsSinceClosed: 0,
      });
      if (!claimant.lateWatch && Date.now() < claimant.settledAt)
        claimant.progress?.(progress.awaitingSettle(claimant.settledAt));
      if (!this.running) void this.run();
    });
  }

  /**
   * Gives up on the claimant's outcome now (its create was cancelled): unknown, with why, and the
   * candidates so far (one being claimed for it among them), so a pending record keeps the create.
   * A claim under way goes on; its token bears the claimant's id, which the record keeps, so whoever
   * resolves the record later recognises the instance as this create's.
   */
  abandon(claimant: Claimant, why: string): Outcome {
    const entry = [...this.entries].find((e) => e.claimant === claimant);
    if (!entry) return this.unknown(claimant, why, []);
    const reason =
      entry.claiming === undefined
        ? `${why} (${entry.reason})`
        : `${why} (instance ${entry.claiming} was being claimed for it)`;
    const outcome = this.unknown(claimant, reason, entry.candidates);
    this.finish(entry, outcome);
    return outcome;
  }

  private async run(): Promise<void> {
    this.running = true;
    while (this.entries.size > 0) {
      await this.round();
      if (this.entries.size > 0) await sleep(this.timing.roundMs);
    }
    this.running = false;
    this.previous = undefined;
    this.lastListed = [];
    this.firstSeen.clear();
  }

  private async round(): Promise<void> {
    const begun = Date.now();
    let walk: Walk;
    try {
      walk = await this.reads.freshWalk();
    } catch (err) {
      this.previous = undefined;
      const why = `listing the instances failed (${messageOf(err)})`;
      if (!isTransientError(err)) return this.giveUp([...this.entries], why);
      this.note(why, true);
      return this.giveUpDue(false);
    }
    this.lastListed = [...walk.instances.values()];
    if (!walk.consistent) {
      this.previous = undefined;
      this.note("the instance list changed while it was read page by page", false);
    } else {
      this.closeWindows(walk, begun);
      this.judge(walk);
      this.previous = walk;
    }
    this.giveUpDue(walk.consistent);
  }

  /** A consistent listing begun after a call settled closes that call's window (a late watch's never closes). */
  private closeWindows(walk: Walk, begun: number): void {
    const t = this.timing;
    for (const entry of this.entries) {
      const { claimant } = entry;
      // The cloud may have shown itself slower since the call went out: an open window waits for that.
      if (claimant.sentAt !== undefined && !claimant.window.closed) {
        claimant.settledAt = Math.max(claimant.settledAt, claimant.sentAt + t.settledAfterSendMs);
        claimant.giveUpAt = Math.max(claimant.giveUpAt, claimant.settledAt);
      }
      if (!claimant.window.closed && !claimant.lateWatch && begun >= claimant.settledAt)
        claimant.window = closedBy(claimant.window, walk.instances.values());
      const watchEnded = entry.watchEndedAt !== undefined && begun >= entry.watchEndedAt;
      if (claimant.window.closed || watchEnded) entry.listingsSinceClosed++;
    }
  }

  private judge(walk: Walk): void {
    const now = Date.now();
    this.observe(walk, now);
    const free = [...this.entries].filter((e) => e.claiming === undefined);
    for (const entry of free) entry.candidates = this.candidatesOf(entry, walk);
    for (const entry of free) {
      const own = entry.candidates.find((c) => c.title?.startsWith(claimPrefix(entry.claimant.id)));
      if (own && !this.claiming.has(own.instance_uuid)) this.startClaim(entry, own);
    }
    const unclaimed = free.filter((e) => e.claiming === undefined);
    const eligible = [...walk.instances.values()].filter(
      (i) => !this.claiming.has(i.instance_uuid) && this.pastGrace(i, now) && !i.title,
    );
    const given = this.giveOut(eligible, unclaimed);
    for (const entry of unclaimed) {
      const candidate = given.get(entry);
      // Past its time, an entry starts no claim: claims whose tokens never land would follow one another
      // for ever, and the entry would never be given up (giveUpDue) and named.
      if (!candidate) this.waiting(entry, walk, now);
      else if (!this.overdue(entry, now, true)) this.startClaim(entry, candidate);
      else
        entry.reason = `instance ${candidate.instance_uuid} stayed untitled past the grace, but no claim of it was decided in the time it is followed (its claim token never showed)`;
    }
    for (const entry of unclaimed.filter((e) => e.claiming === undefined)) {
      if (this.noneMade(entry, walk, now))
        this.finish(entry, { kind: "not-made", nearMisses: this.nearMisses(entry, walk) });
    }
  }

  /**
   * The eligible instances given out: first to the creates under way (and the pending records), by a
   * maximum matching of their windows, then what is left to the late watches, which only ever take an
   * instance no create under way can be owed.
   */
  private giveOut(eligible: CloudInstance[], entries: Entry[]): Map<Entry, CloudInstance> {
    const admits = (c: CloudInstance, e: Entry) => this.admits(e, c);
    const creates = entries.filter((e) => !e.claimant.lateWatch);
    const given = maximumMatching(byAge(eligible), byWindow(creates), admits);
    const owed = new Set(creates.flatMap((e) => e.candidates.map((c) => c.instance_uuid)));
    const left = eligible.filter((i) => !owed.has(i.instance_uuid));
    const watches = entries.filter((e) => e.claimant.lateWatch);
    for (const [entry, candidate] of maximumMatching(byAge(left), byWindow(watches), admits))
      given.set(entry, candidate);
    return given;
  }

  /** Why the entry's outcome is not decided yet, and what its claimant hears of it. */
  private waiting(entry: Entry, walk: Walk, now: number): void {
    entry.reason = this.waitingReason(entry, walk);
    const { claimant } = entry;
    if (entry.candidates.length > 0) {
      const uuids = entry.candidates.map((c) => c.instance_uuid);
      const graceEnds = Math.max(
        now,
        ...uuids.map((u) => (this.firstSeen.get(u) ?? now) + this.timing.graceMs),
      );
      claimant.progress?.(progress.awaitingGrace(uuids, graceEnds, claimMs(this.timing)));
    } else if (!claimant.lateWatch && now < claimant.settledAt) {
      claimant.progress?.(progress.awaitingSettle(claimant.settledAt));
    }
  }

  /**
   * Notes when each unmarked instance of the spec was first seen unmarked; forgets one seen marked, or
   * gone from a one-page listing (a listing of several pages may just have skipped it). One seen titled
   * is someone's from then on (taken), even if its title is cleared later.
   */
  private observe(walk: Walk, now: number): void {
    for (const uuid of this.firstSeen.keys()) {
      const listed = walk.instances.get(uuid);
      if (listed ? !unmarked(listed) : walk.atomic) this.firstSeen.delete(uuid);
    }
    for (const instance of walk.instances.values()) {
      if (!matchesSpec(instance, this.spec)) continue;
      if (!unmarked(instance)) this.taken.mark(instance.instance_uuid);
      else if (!this.firstSeen.has(instance.instance_uuid)) this.firstSeen.set(instance.instance_uuid, now);
    }
  }

  private pastGrace(instance: CloudInstance, now: number): boolean {
    const seen = this.firstSeen.get(instance.instance_uuid);
    return seen !== undefined && now - seen >= this.timing.graceMs;
  }

  /** The listed instances `entry`'s create may have made, that nobody else is known to own. */
  private candidatesOf(entry: Entry, walk: Walk): CloudInstance[] {
    return [...walk.instances.values()].filter(
      (i) => this.admits(entry, i) && !this.claiming.has(i.instance_uuid),
    );
  }

  /** Whether `entry`'s create may have made `instance`: of the spec, unmarked (or claimed by it), in its window, not taken. */
  private admits(entry: Entry, instance: CloudInstance): boolean {
    const { claimant } = entry;
    const title = instance.title;
    const free = !title || title.startsWith(claimPrefix(claimant.id));
    return (
      free &&
      matchesSpec(instance, this.spec) &&
      !this.taken.has(instance.instance_uuid) &&
      inWindow(claimant.window, instance, claimant.earlierRun)
    );
  }

  private waitingReason(entry: Entry, walk: Walk): string {
    if (entry.candidates.length > 0) {
      const listed = entry.candidates.map((c) => c.instance_uuid).join(", ");
      return `instance ${listed} appeared unmarked, but not for long enough to be sure that no deployer that got its create answer is about to title it (${Math.round(this.timing.graceMs / 1000)} s)`;
    }
    const none = walk.atomic
      ? "no instance of this spec appeared yet"
      : "no instance of this spec appeared yet in a listing of several pages";
    return [none, ...this.nearMisses(entry, walk)].join("; ");
  }

  /**
   * Unmarked instances of the same pod or image in the entry's window that are not of its spec, each
   * with the fields that differ: never adopted, but named, so a person reading why nothing was adopted
   * sees why the instance they can see in the console was not taken.
   */
  private nearMisses(entry: Entry, walk: Walk): string[] {
    return [...walk.instances.values()].flatMap((i) => {
      if (i.title || matchesSpec(i, this.spec) || this.taken.has(i.instance_uuid)) return [];
      if (!inWindow(entry.claimant.window, i, entry.claimant.earlierRun)) return [];
      const differs = specDifferences(i, this.spec);
      const sameSource = !differs.some((d) => d.input === "podUuid" || d.input === "imageUuid");
      return sameSource && differs.length > 0
        ? [
            `instance ${i.instance_uuid} appeared untitled in the window but was not adopted: ${differs.map(describeDifference).join(", ")}`,
          ]
        : [];
    });
  }

  /** Two consecutive consistent listings that agree, once the call settled, and neither shows a candidate. */
  private noneMade(entry: Entry, walk: Walk, now: number): boolean {
    const previous = this.previous;
    if (now < entry.claimant.settledAt || !entry.claimant.window.closed || !previous) return false;
    if (entry.candidates.length > 0) return false;
    const same =
      previous.instances.size === walk.instances.size &&
      [...walk.instances.keys()].every((uuid) => previous.instances.has(uuid));
    return same && ![...previous.instances.values()].some((i) => this.admits(entry, i));
  }

  private startClaim(entry: Entry, candidate: CloudInstance): void {
    const uuid = candidate.instance_uuid;
    entry.claiming = uuid;
    this.claiming.add(uuid);
    const t = this.timing;
    const now = Date.now();
    entry.claimant.progress?.(progress.claiming(uuid, now + claimMs(t)));
    // Long enough for the claim's reads to ride out an outage past the give-up time: a claim under way
    // is finished rather than left with its token on the instance.
    // A late watch under way has no give-up time yet: its claim gets the same time from now.
    const giveUpAt = Number.isFinite(entry.claimant.giveUpAt) ? entry.claimant.giveUpAt : now;
    const deadline = Math.max(giveUpAt, now) + t.claimWriteMs + t.settledAfterSendMs + t.rivalsLandedMs;
    const seenAt = this.firstSeen.get(uuid);
    claim(this.ctx, uuid, entry.claimant.id, t, deadline)
      .then(
        (result) => {
          entry.claiming = undefined;
          if (result.kind === "untitled") return;
          // Won, or someone else's (titled by its owner, claimed by another, or gone): never ours again.
          this.taken.mark(uuid);
          if (result.kind !== "won") return;
          if (entry.claimant.lateWatch) this.sawLateCommit(entry.claimant, uuid, seenAt);
          this.finish(entry, { kind: "adopted", instance: result.instance });
        },
        (err: unknown) =>
          this.finish(
            entry,
            this.unknown(
              entry.claimant,
              `claiming instance ${uuid} could not be finished (${messageOf(err)})`,
              [candidate],
            ),
          ),
      )
      .finally(() => this.claiming.delete(uuid));
  }

  /**
   * A late watch won an instance: the cloud carried a create call out after the model's bound. From the
   * call's send to the listing that first showed the instance is how slow it can be; the model follows.
   */
  private sawLateCommit(claimant: Claimant, uuid: string, seenAt: number | undefined): void {
    if (claimant.sentAt === undefined || seenAt === undefined) return;
    const before = this.timing.settledAfterSendMs;
    const tookMs = seenAt - claimant.sentAt;
    if (!this.pace.sawCommitWithin(tookMs)) return;
    warn(
      `The cloud carried out a create call of ${describeSpec(this.spec)} up to ${progress.seconds(tookMs)} after it was sent ` +
        `(instance ${uuid}), later than the ${progress.seconds(before)} the recovery of lost answers allows for ` +
        `(3 x gpucloud:requestTimeoutMs). For the rest of this run it allows ${progress.seconds(this.timing.settledAfterSendMs)}; ` +
        `raise gpucloud:requestTimeoutMs to at least ${Math.ceil(tookMs / 2)} ms so that the next runs do too.`,
    );
  }

  /**
   * Ends a late watch: it is decided on a listing begun from now (an instance that appeared by now is
   * seen), and any instance it follows is followed to its end.
   */
  endWatch(claimant: Claimant): void {
    const entry = [...this.entries].find((e) => e.claimant === claimant);
    if (!entry) return;
    entry.watchEndedAt = Date.now();
    claimant.giveUpAt = entry.watchEndedAt;
  }

  /** Why no entry without a claim under way can be decided this round; `failing`: the listing itself fails. */
  private note(reason: string, failing: boolean): void {
    for (const entry of this.entries) {
      if (entry.claiming !== undefined) continue;
      entry.reason = reason;
      if (failing && Number.isFinite(entry.claimant.giveUpAt))
        entry.claimant.progress?.(progress.listingFails(reason, entry.claimant.giveUpAt));
    }
  }

  /**
   * Gives up the entries whose time is up, never one that still follows an instance that appeared. While
   * the listings work, not before the absence rule had its two listings of the closed window (a late
   * watch: one listing after it began): with a cloud that answers, the outcome of a call that made
   * nothing is never left unknown.
   */
  private giveUpDue(listingsWork: boolean): void {
    const now = Date.now();
    // A late watch rides out a listing that fails or shifts while it follows an instance: it ends on a listing.
    const due = (e: Entry) =>
      e.claiming === undefined &&
      this.overdue(e, now, listingsWork || e.claimant.lateWatch === true) &&
      (!listingsWork || e.listingsSinceClosed >= (e.claimant.lateWatch ? 1 : 2));
    for (const entry of [...this.entries].filter(due)) {
      // A late watch that listed and saw nothing of the spec it could take: nothing came late.
      if (listingsWork && entry.claimant.lateWatch && entry.candidates.length === 0)
        this.finish(entry, { kind: "not-made", nearMisses: [] });
      else this.finish(entry, this.unknown(entry.claimant, entry.reason, entry.candidates));
    }
  }

  /** Whether the entry's give-up time has passed, and with it the time it follows its instances. */
  private overdue(entry: Entry, now: number, following: boolean): boolean {
    return now >= Math.max(entry.claimant.giveUpAt, this.followedUntil(entry, following));
  }

  /**
   * Until when the entry still follows the instances it could be owed (epoch ms; 0 when none): each gets
   * its grace and its claim from when this process first saw it, however late it appeared.
   */
  private followedUntil(entry: Entry, following: boolean): number {
    if (!following) return 0;
    const adoption = adoptionMs(this.timing);
    const seen = entry.candidates.map((c) => this.firstSeen.get(c.instance_uuid) ?? Date.now());
    return Math.max(0, ...seen.map((at) => at + adoption));
  }

  private giveUp(entries: Entry[], reason: string): void {
    for (const entry of entries) this.finish(entry, this.unknown(entry.claimant, reason, entry.candidates));
  }

  private unknown(claimant: Claimant, reason: string, candidates: CloudInstance[]): Outcome {
    return { kind: "unknown", reason, candidates, window: claimant.window, listed: this.lastListed };
  }

  private finish(entry: Entry, outcome: Outcome): void {
    if (!this.entries.delete(entry)) return;
    entry.resolve(outcome);
  }
}

/**
 * The reconcilers of one provider process, one per spec for the current client (a new client, after a
 * config change, gets its own).
 */
export class Reconcilers {
  private readonly bySpec = new Map<string, { api: unknown; reconciler: Reconciler }>();

  constructor(
    private readonly taken: TakenInstances,
    private readonly pace: CloudPace,
  ) {}

  for(ctx: ProviderContext, spec: CreateSpec, reads: InstanceReads): Reconciler {
    const key = specKey(spec);
    const known = this.bySpec.get(key);
    if (known?.api === ctx.api) return known.reconciler;
    const reconciler = new Reconciler(ctx, spec, reads, this.taken, this.pace);
    this.bySpec.set(key, { api: ctx.api, reconciler });
    return reconciler;
  }
}

export type { Reconciler };
