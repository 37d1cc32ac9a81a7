/**
 * Finding out what a create whose answer was lost made. The create call takes no idempotency key
 * (field-notes.md), so the only evidence is the instance list: an instance of the create's spec that
 * appeared in its time window, that nobody titled and that nobody else is known to own. One reconciler
 * per spec (per provider process) serves every create of that spec whose outcome is unknown, the lost
 * attempts of this run and the pending records of earlier runs alike, because instances of one spec are
 * interchangeable until they are titled: they are matched by count, not by identity.
 *
 * Each poll interval it reads a checked listing (shared with the waits of reads.ts) and applies:
 * - the quiet rule: a candidate is adopted only after it stayed untitled for quietMs, since a creator
 *   whose answer arrived titles its instance within a request or two (for records of an earlier run,
 *   its age on the cloud's clock counts as well);
 * - the count rule: while more candidates than unresolved creates are listed, another deployer is
 *   creating the same spec right now, so nothing is adopted until their titles tell them apart;
 * - the claim (claim.ts) before anything is adopted;
 * - absence only from two consecutive consistent listings that agree: a create and a delete between
 *   two pages can keep a listing consistent while hiding an instance.
 */
import { randomBytes } from "node:crypto";
import { isTransientError, type Instance as CloudInstance } from "../../../sdk";
import type { ProviderContext } from "../../framework/context";
import type { ProviderSettings } from "../../settings";
import { claim, claimPrefix } from "./claim";
import { describeDifference, matchesSpec, specDifferences, specKey, type CreateSpec } from "./create-spec";
import { maximumMatching } from "./matching";
import { instanceReads, type Walk } from "./reads";
import { isTaken, markTaken } from "./taken";
import { messageOf } from "../../framework/errors";

/** How long the rules wait, from the request timeout: everything here is "a request or two". */
export interface CreateTiming {
  /** How long a candidate must stay untitled before it may be adopted. */
  quietMs: number;
  /** How long after a lost answer the cloud may still commit the create (it may outlive our timeout). */
  settleMs: number;
  /** How long a claim waits after its write for other claimers' writes to land. */
  claimSettleMs: number;
  requestTimeoutMs: number;
  pollIntervalMs: number;
}

/**
 * How long after a lost answer the cloud may still carry out the call: it may hold a request past our
 * timeout. A call of no effect by then never takes effect (lost creates and power changes alike).
 */
export function lateCommitMs(settings: ProviderSettings): number {
  return 2 * settings.requestTimeoutMs;
}

export function createTiming(settings: ProviderSettings): CreateTiming {
  const request = settings.requestTimeoutMs;
  return {
    quietMs: 2 * request,
    settleMs: lateCommitMs(settings),
    // Another claimer's read may be in flight for a request's time when our write lands, and its write
    // may take another: 2, not 1, request times.
    claimSettleMs: 2 * request,
    requestTimeoutMs: request,
    pollIntervalMs: settings.pollIntervalMs,
  };
}

/** A create whose outcome is unknown: a lost attempt of this run, or a pending record of an earlier one. */
export interface Claimant {
  /** 8 hex: names its claim tokens and its pending record. */
  id: string;
  /** Cloud Unix seconds: an instance it made was created at or after this. */
  windowStart: number;
  /** Cloud Unix seconds: ... and at or before this; open while the attempt is of this run. */
  windowEnd?: number;
  /** Instances listed before the call was sent: not made by it. */
  listedBefore: ReadonlySet<string>;
  /** Made in an earlier run: a candidate's age on the cloud's clock counts toward the quiet rule. */
  earlierRun: boolean;
  /** From then on (epoch ms), two agreeing listings without a candidate mean nothing was made. */
  notMadeAfter: number;
  /** Then (epoch ms) the outcome is left unknown. */
  giveUpAt: number;
}

export type Outcome =
  | { kind: "adopted"; instance: CloudInstance }
  | { kind: "not-made" }
  | { kind: "unknown"; reason: string; candidates: CloudInstance[] };

export function newClaimantId(): string {
  return randomBytes(4).toString("hex");
}

interface Entry {
  claimant: Claimant;
  resolve(outcome: Outcome): void;
  /** The candidate being claimed for it, if any. */
  claiming?: string;
  /** Why its outcome is not known yet, and what it could be: what a pending record reports. */
  reason: string;
  candidates: CloudInstance[];
}

const byAge = (instances: CloudInstance[]) =>
  [...instances].sort((a, b) => (a.create_time ?? 0) - (b.create_time ?? 0));
const byWindow = (entries: Entry[]) =>
  [...entries].sort((a, b) => a.claimant.windowStart - b.claimant.windowStart);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class Reconciler {
  private readonly entries = new Set<Entry>();
  /** When each untitled instance of the spec was first seen untitled (epoch ms). */
  private readonly firstSeen = new Map<string, number>();
  private readonly claiming = new Set<string>();
  private previous: Walk | undefined;
  private running = false;

  constructor(
    private readonly ctx: ProviderContext,
    private readonly spec: CreateSpec,
    private readonly timing: CreateTiming,
  ) {}

  /** Resolves once the claimant's outcome is decided: adopted (claimed), not made, or unknown. */
  settle(claimant: Claimant): Promise<Outcome> {
    return new Promise((resolve) => {
      this.entries.add({ claimant, resolve, reason: "no listing was read yet", candidates: [] });
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
    if (!entry) return { kind: "unknown", reason: why, candidates: [] };
    const reason =
      entry.claiming === undefined
        ? `${why} (${entry.reason})`
        : `${why} (instance ${entry.claiming} was being claimed for it)`;
    const outcome: Outcome = { kind: "unknown", reason, candidates: entry.candidates };
    this.finish(entry, outcome);
    return outcome;
  }

  private async run(): Promise<void> {
    this.running = true;
    while (this.entries.size > 0) {
      await this.round();
      if (this.entries.size > 0) await sleep(this.timing.pollIntervalMs);
    }
    this.running = false;
    this.previous = undefined;
    this.firstSeen.clear();
  }

  private async round(): Promise<void> {
    let walk: Walk;
    try {
      walk = await instanceReads(this.ctx.api).freshWalk();
    } catch (err) {
      this.previous = undefined;
      const why = `listing the instances failed (${messageOf(err)})`;
      if (!isTransientError(err)) return this.giveUp([...this.entries], why);
      this.note(why);
      return this.giveUpDue();
    }
    if (!walk.consistent) {
      this.previous = undefined;
      this.note("the instance list changed while it was read page by page");
    } else {
      this.judge(walk);
      this.previous = walk;
    }
    this.giveUpDue();
  }

  private judge(walk: Walk): void {
    const now = Date.now();
    this.observe(walk, now);
    const free = [...this.entries].filter((e) => e.claiming === undefined);
    const candidates = this.candidates(walk, free);
    for (const entry of free) entry.candidates = candidates.filter((c) => this.admits(entry, c));
    for (const entry of free) {
      const own = entry.candidates.find((c) => c.title?.startsWith(claimPrefix(entry.claimant.id)));
      if (own) this.startClaim(entry, own);
    }
    const unclaimed = free.filter((e) => e.claiming === undefined);
    const open = candidates.filter((c) => !this.claiming.has(c.instance_uuid));
    const matching = maximumMatching(byAge(open), byWindow(unclaimed), (c, e) => this.admits(e, c));
    if (matching.size < open.length) {
      const why =
        `${open.length} untitled instances of this spec appeared, more than the ${unclaimed.length} of its creates awaiting their outcome can have made: ` +
        "someone else may be creating the same spec right now, and until they title theirs, which is whose cannot be told";
      for (const entry of unclaimed) entry.reason = why;
    } else {
      this.assign(unclaimed, matching, walk, now);
    }
    for (const entry of unclaimed.filter((e) => e.claiming === undefined)) {
      if (this.noneMade(entry, walk, now)) this.finish(entry, { kind: "not-made" });
    }
  }

  /**
   * Notes when each untitled instance of the spec was first seen untitled; forgets one seen titled, or
   * gone from a one-page listing (a listing of several pages may just have skipped it).
   */
  private observe(walk: Walk, now: number): void {
    for (const uuid of this.firstSeen.keys()) {
      const listed = walk.instances.get(uuid);
      if (listed ? listed.title : walk.atomic) this.firstSeen.delete(uuid);
    }
    for (const instance of walk.instances.values()) {
      if (!instance.title && matchesSpec(instance, this.spec) && !this.firstSeen.has(instance.instance_uuid))
        this.firstSeen.set(instance.instance_uuid, now);
    }
  }

  /** Listed instances of the spec that one of `entries` may have made and nobody else is known to own. */
  private candidates(walk: Walk, entries: Entry[]): CloudInstance[] {
    return [...walk.instances.values()].filter(
      (i) => matchesSpec(i, this.spec) && !isTaken(i.instance_uuid) && entries.some((e) => this.admits(e, i)),
    );
  }

  /** Whether `entry`'s create may have made `instance`: untitled (or titled with its own claim), in its window. */
  private admits(entry: Entry, instance: CloudInstance): boolean {
    const { claimant } = entry;
    const untitled = !instance.title || instance.title.startsWith(claimPrefix(claimant.id));
    if (!untitled || claimant.listedBefore.has(instance.instance_uuid)) return false;
    const created = instance.create_time;
    // Without a create time, only the listing taken before the call can rule an instance out.
    if (created === undefined) return !claimant.earlierRun;
    return (
      created >= claimant.windowStart && (claimant.windowEnd === undefined || created <= claimant.windowEnd)
    );
  }

  private isQuiet(entry: Entry, instance: CloudInstance, now: number): boolean {
    const seen = this.firstSeen.get(instance.instance_uuid);
    if (seen !== undefined && now - seen >= this.timing.quietMs) return true;
    const cloudNow = this.ctx.api.cloudNow();
    return (
      entry.claimant.earlierRun &&
      cloudNow !== undefined &&
      instance.create_time !== undefined &&
      cloudNow - instance.create_time * 1000 >= this.timing.quietMs
    );
  }

  /**
   * Claims, for each entry, the candidate the matching gave it once that one is quiet. Any complete
   * matching is exact: instances of one spec are interchangeable until titled.
   */
  private assign(entries: Entry[], matching: Map<Entry, CloudInstance>, walk: Walk, now: number): void {
    for (const entry of entries) {
      const given = matching.get(entry);
      if (given && this.isQuiet(entry, given, now)) {
        this.startClaim(entry, given);
      } else if (entry.candidates.length > 0) {
        entry.reason = `instance ${entry.candidates.map((c) => c.instance_uuid).join(", ")} appeared untitled, but not for long enough to tell it from one its creator is about to title`;
      } else {
        const none = walk.atomic
          ? "no instance of this spec appeared yet"
          : "no instance of this spec appeared yet in a listing of several pages";
        entry.reason = [none, ...this.nearMisses(entry, walk)].join("; ");
      }
    }
  }

  /**
   * Untitled instances of the same pod or image in the entry's window that are not of its spec, each
   * with the fields that differ: never adopted, but named, so a person reading why nothing was adopted
   * sees why the instance they can see in the console was not taken.
   */
  private nearMisses(entry: Entry, walk: Walk): string[] {
    return [...walk.instances.values()].flatMap((i) => {
      if (matchesSpec(i, this.spec) || isTaken(i.instance_uuid) || !this.admits(entry, i)) return [];
      const differs = specDifferences(i, this.spec);
      const sameSource = !differs.some((d) => d.input === "podUuid" || d.input === "imageUuid");
      return sameSource && differs.length > 0
        ? [
            `instance ${i.instance_uuid} appeared untitled in the window but was not adopted: ${differs.map(describeDifference).join(", ")}`,
          ]
        : [];
    });
  }

  /** Two consecutive consistent listings that agree, past the settle time, and neither shows a candidate. */
  private noneMade(entry: Entry, walk: Walk, now: number): boolean {
    const previous = this.previous;
    if (now < entry.claimant.notMadeAfter || !previous || entry.candidates.length > 0) return false;
    const same =
      previous.instances.size === walk.instances.size &&
      [...walk.instances.keys()].every((uuid) => previous.instances.has(uuid));
    return (
      same &&
      ![...previous.instances.values()].some(
        (i) => matchesSpec(i, this.spec) && !isTaken(i.instance_uuid) && this.admits(entry, i),
      )
    );
  }

  private startClaim(entry: Entry, candidate: CloudInstance): void {
    const uuid = candidate.instance_uuid;
    entry.claiming = uuid;
    this.claiming.add(uuid);
    const deadline =
      Math.max(entry.claimant.giveUpAt, Date.now()) +
      this.timing.claimSettleMs +
      2 * this.timing.requestTimeoutMs;
    claim(this.ctx, uuid, entry.claimant.id, {
      deadline,
      writeMs: this.timing.requestTimeoutMs,
      settleMs: this.timing.claimSettleMs,
      pollIntervalMs: this.timing.pollIntervalMs,
    })
      .then(
        (result) => {
          if (result.kind === "untitled") {
            entry.claiming = undefined;
            return;
          }
          // Won, or someone else's (titled by its owner, claimed by another, or gone): never ours again.
          markTaken(uuid);
          if (result.kind === "won") this.finish(entry, { kind: "adopted", instance: result.instance });
          else entry.claiming = undefined;
        },
        (err: unknown) =>
          this.finish(entry, {
            kind: "unknown",
            reason: `claiming instance ${uuid} could not be finished (${messageOf(err)})`,
            candidates: [candidate],
          }),
      )
      .finally(() => this.claiming.delete(uuid));
  }

  private note(reason: string): void {
    for (const entry of this.entries) if (entry.claiming === undefined) entry.reason = reason;
  }

  private giveUpDue(): void {
    const now = Date.now();
    this.giveUp(
      [...this.entries].filter((e) => e.claiming === undefined && now >= e.claimant.giveUpAt),
      undefined,
    );
  }

  private giveUp(entries: Entry[], reason: string | undefined): void {
    for (const entry of entries) {
      this.finish(entry, { kind: "unknown", reason: reason ?? entry.reason, candidates: entry.candidates });
    }
  }

  private finish(entry: Entry, outcome: Outcome): void {
    if (!this.entries.delete(entry)) return;
    entry.resolve(outcome);
  }
}

const reconcilers = new Map<string, { api: unknown; reconciler: Reconciler }>();

/** The reconciler of this spec for this process's client (a new client, after a config change, gets its own). */
export function reconcilerFor(ctx: ProviderContext, spec: CreateSpec): Reconciler {
  const key = specKey(spec);
  const known = reconcilers.get(key);
  if (known?.api === ctx.api) return known.reconciler;
  const reconciler = new Reconciler(ctx, spec, createTiming(ctx.settings));
  reconcilers.set(key, { api: ctx.api, reconciler });
  return reconciler;
}

export type { Reconciler };
