/**
 * Coalesced instance reads. A refresh reads every instance of a stack at once, and a create waits for
 * every new instance at once; one /instance/info per instance per poll is what makes fleets hit 429s.
 * Here the reads of one provider process share walks of /instance/list, and every instance waiting for
 * a status shares one walk per poll interval.
 *
 * The engine hands a refresh's reads over spread out in time (its parallelism, and in the dynamic
 * provider server each call's own work), so a refresh's reads share walks by this rule:
 *   A resource's read rides the latest walk that reads rode while that walk is under way or was last
 *   busy (it ended, or a read rode it) at most READ_SHARING_GAP_MS before, unless a write of this
 *   process was answered or this resource was read since it started; otherwise it starts a new walk.
 * Why that holds:
 * - One walk per refresh, however slowly its reads come: they come without a pause of the gap. And a
 *   walk answers each resource once, so it serves at most one refresh.
 * - Read your writes: a write's answer moves the client's write count (GpuCloudClient.writesEnded), and
 *   no walk started before it answers a read that comes after it.
 * - Drift shows: under the Pulumi CLI each operation starts its own provider process, so every walk a
 *   refresh shares started after the refresh did. A process that serves several operations (the
 *   `pulumi-gpucloud/testing` Stack) reads each resource once per refresh, so the next refresh's read of
 *   it takes a new walk; the walks of waits and strict reads are never shared, so the first read after
 *   an `up` starts its own. Only what another client changes while a refresh's reads are coming in may
 *   go unseen (that refresh shows the cloud as its walk found it, after the refresh began), and never
 *   so that an instance is taken for gone (below).
 * - A lone read waits for no one: it starts a walk within BATCH_WINDOW_MS.
 * The waits, `info` and `freshWalk` stay strict: they are answered only by a walk that started after
 * they were asked (a claim's settle window and the reconciliation of a lost create depend on that).
 * In every case, results stay exact about what a walk cannot show:
 * - an instance absent from a walk is gone only when that walk started after the read was asked and
 *   cannot have skipped it (its first page held the whole list); otherwise /instance/info decides, as
 *   it would have without coalescing. A refresh drops what it reads as gone from the stack, so an
 *   instance made by another process after a shared walk must never look gone;
 * - a listed record that lacks what /instance/info carries (server_url, server_map) is read with info.
 * One `InstanceReads` per client is kept in the Instance's process memory (memory.ts), so it lasts as
 * long as the provider process.
 */
import {
  DEFAULT_MAX_PAGES,
  instanceStatusName,
  nextPageSize,
  isTransientError,
  NotFoundError,
  sleep,
  TimeoutError,
  unendingList,
  walkEnds,
  type GpuCloudClient,
  type Instance,
} from "../../../sdk";
import { OperationCancelledError } from "../../framework/errors";
import { isHalting } from "./cloud";

function stoppedWhileWaiting(instanceUuid: string, seen: Instance): Error {
  return new Error(
    `Could not wait for instance ${instanceUuid} to run: it stopped while this waited (now status ${seen.status}, ` +
      `${instanceStatusName(seen.status)}). Check the instance in the console, then run the update again.`,
  );
}

/** How long the first read of a batch waits for others to join its walk. */
export const BATCH_WINDOW_MS = 5;
/**
 * How long a finished walk stays shared without a read riding it. The reads of one refresh come far
 * closer together: a thousand reached the provider within 1 s through the dynamic door on an idle
 * 2-core machine, within 15 s on one loaded eight times over.
 */
export const READ_SHARING_GAP_MS = 2_000;
/** The resource an instance read is for, unless the caller names another (see `read`). */
const INSTANCE_RESOURCE = "Instance";
/**
 * Polls take at most this share of the request budget, leaving the rest to the writes that polls wait
 * for: a slow API makes the next walk wait longer, and so does a rate limit (a walk then costs one
 * paced gap per page, however long its requests queued behind the writes).
 */
export const POLL_SHARE = 0.25;
/** The emulator's largest page; the API shows no maximum for the live service (docs/design/cloud-api.md#paging). */
export const LIST_PAGE_SIZE = 100;

/** One walk of /instance/list. */
export interface Walk {
  instances: Map<string, Instance>;
  /**
   * The pages fit together: every page reported the same total, no uuid came twice, and no page but the
   * last with items was short. What was collected need not equal the total: the live service is
   * reported to count hidden instances in it, which no page lists.
   */
  consistent: boolean;
  /** The first page held the whole list (it was short, and no later page listed more), so nothing can have shifted between pages. */
  atomic: boolean;
  pages: number;
  /**
   * The cloud's time (Unix ms, from its Date header) read as the last page arrived: a lower bound, to
   * the header's second, on the create time of anything made after the walk. Undefined without a Date.
   */
  cloudMs?: number;
}

export interface StatusWaitOptions {
  timeoutMs: number;
  pollIntervalMs: number;
  /**
   * Ends the wait at once when aborted (the engine's Cancel), with an OperationCancelledError naming
   * what was awaited and what was last seen. The shared walks go on for the other waiters.
   */
  signal?: AbortSignal;
}

interface Waiter {
  /** Only walks numbered above this started after the waiter was registered. */
  after: number;
  pollIntervalMs: number;
  deadline: number;
  /** Settles the waiter from a walk; returns true when it is settled. */
  offer(walk: Walk): Promise<boolean>;
  fail(err: unknown): void;
  /** A poll failed in a way that may pass (see isTransientError): the wait goes on until its deadline. */
  pollFailed(err: Error): void;
  timeOut(): void;
}

/**
 * List and info both return server_url and server_map; creation records carry neither
 * (docs/design/cloud-api.md#instance-record).
 */
function hasInfoFields(instance: Instance): boolean {
  return Array.isArray(instance.server_url) && Array.isArray(instance.server_map);
}

function goneError(instanceUuid: string): NotFoundError {
  return new NotFoundError({
    action: `read instance ${instanceUuid}`,
    method: "GET",
    path: "/instance/list",
    status: 404,
    message: `Could not read instance ${instanceUuid}: it is not in the instance list, so it was destroyed or belongs to another user.`,
  });
}

/** A walk that reads rode, as the sharing rule of `read` sees it. */
interface StartedWalk {
  number: number;
  underWay: boolean;
  /** When it ended or a read last rode it, on the reads' clock. */
  lastBusyAt: number;
  /** The client's write count as it started (GpuCloudClient.writesEnded). */
  writesEnded: number;
  walk: Promise<Walk>;
  failed: boolean;
}

export class InstanceReads {
  private walksStarted = 0;
  private lastWalkEndedAt = -Infinity;
  /** What the last walk took of the request budget (see POLL_SHARE). */
  private lastWalkCostMs = 0;
  private inFlight: Promise<unknown> | undefined;
  private queued: Promise<Walk> | undefined;
  private readonly waiters = new Set<Waiter>();
  private readonly listed = new Set<string>();
  private newestListed: number | undefined;
  private lastCloudMs: number | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  /** The latest walk that reads rode. */
  private latest: StartedWalk | undefined;
  /** A read waits for the walk queued: it becomes `latest` when it starts. */
  private readsQueued = false;
  /** For each resource ("Instance <uuid>"), how many walks had started when its last read was answered. */
  private readonly answered = new Map<string, number>();

  /** `now`: the clock READ_SHARING_GAP_MS is measured on (monotonic ms). */
  constructor(
    private readonly api: GpuCloudClient,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * A refresh's read of `resource` (its type, such as "IdleClosePolicy"), whose id is the instance's:
   * like /instance/info (NotFoundError when gone), answered by the sharing rule of this module's header.
   */
  async read(instanceUuid: string, resource: string): Promise<Instance> {
    const key = `${resource} ${instanceUuid}`;
    const shared = this.shareable(key);
    try {
      if (shared) {
        shared.lastBusyAt = this.now();
        return await this.fromWalk(await shared.walk, instanceUuid, { startedAfterAsked: false });
      }
      return await this.fromWalk(await this.nextWalkForReads(), instanceUuid);
    } finally {
      this.answered.set(key, this.walksStarted);
    }
  }

  /**
   * The instance as `resource`'s read shows it (the Instance's own, unless another resource whose id is
   * the instance's reads it); undefined when the cloud says it does not exist.
   */
  async unlessGone(
    instanceUuid: string,
    resource: string = INSTANCE_RESOURCE,
  ): Promise<Instance | undefined> {
    try {
      return await this.read(instanceUuid, resource);
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  }

  /** Like /instance/info (NotFoundError when gone), answered by a walk that starts after this call. */
  async info(instanceUuid: string): Promise<Instance> {
    return this.fromWalk(await this.nextWalk(), instanceUuid);
  }

  /** A walk that starts after this call; once it resolves, its uuids are in everListed. */
  freshWalk(): Promise<Walk> {
    return this.nextWalk();
  }

  /** Every uuid a finished walk listed: each of these instances existed before now. */
  get everListed(): ReadonlySet<string> {
    return this.listed;
  }

  /**
   * The newest create time (cloud Unix seconds) any finished walk listed: everything made after this call
   * is at least as new, on the clock that stamps every create time. Undefined before any create time was seen.
   */
  get newestCreateTime(): number | undefined {
    return this.newestListed;
  }

  /** The cloud's time as the latest finished walk ended (see Walk.cloudMs). */
  get lastWalkCloudMs(): number | undefined {
    return this.lastCloudMs;
  }

  /**
   * Like client.instances.waitForStatus, polling through the shared walks. A wait for the instance to
   * run fails at once when it is seen on its way and then halting: it stopped under us (out of band, or
   * it failed), and would never run within the wait. A halted status seen first is not enough: right
   * after a start-up call, a read may still show the instance stopped.
   */
  waitForStatus(instanceUuid: string, statuses: number[], options: StatusWaitOptions): Promise<Instance> {
    const wanted = statuses.map((s) => `${s} (${instanceStatusName(s)})`).join(" or ");
    const towardsRunning = !statuses.some(isHalting);
    let seenOnItsWay = false;
    let lastSeen = "nothing yet";
    return this.wait(options, `instance ${instanceUuid} to reach status ${wanted}`, () => lastSeen, {
      instanceUuid,
      accept: async (walk) => {
        const seen = await this.fromWalk(walk, instanceUuid);
        lastSeen = `status ${seen.status} (${instanceStatusName(seen.status)})`;
        if (statuses.includes(seen.status)) return seen;
        if (towardsRunning && seenOnItsWay && isHalting(seen.status))
          throw stoppedWhileWaiting(instanceUuid, seen);
        seenOnItsWay ||= !isHalting(seen.status);
        return undefined;
      },
    });
  }

  /**
   * Resolves once a consistent walk no longer lists the instance. Used after destroy was accepted: a walk
   * that skipped a still-listed instance would only end this wait early, never drop a live instance.
   */
  async waitUntilGone(instanceUuid: string, options: StatusWaitOptions): Promise<void> {
    let lastSeen = "no listing read yet";
    await this.wait(options, `instance ${instanceUuid} to be gone`, () => lastSeen, {
      instanceUuid,
      accept: async (walk) => {
        const listed = walk.instances.get(instanceUuid);
        if (listed) lastSeen = `status ${listed.status} (${instanceStatusName(listed.status)})`;
        return !listed && walk.consistent ? true : undefined;
      },
    });
  }

  /** The latest walk that reads rode, when the sharing rule lets it answer a read of `key`. */
  private shareable(key: string): StartedWalk | undefined {
    const latest = this.latest;
    if (!latest || latest.failed) return undefined;
    const busy = latest.underWay || this.now() - latest.lastBusyAt <= READ_SHARING_GAP_MS;
    const afterWrites = latest.writesEnded === this.api.writesEnded;
    const afterLastRead = latest.number > (this.answered.get(key) ?? 0);
    return busy && afterWrites && afterLastRead ? latest : undefined;
  }

  private nextWalkForReads(): Promise<Walk> {
    const walk = this.nextWalk();
    this.readsQueued = true;
    return walk;
  }

  /**
   * The instance as `walk` shows it; /instance/info decides what the walk cannot, and whether an
   * instance absent from a walk that started before it was asked for is gone.
   */
  private fromWalk(walk: Walk, instanceUuid: string, { startedAfterAsked = true } = {}): Promise<Instance> {
    const listed = walk.instances.get(instanceUuid);
    if (listed && hasInfoFields(listed)) return Promise.resolve(listed);
    const surelyGone = !listed && startedAfterAsked && walk.consistent && walk.atomic;
    if (surelyGone) return Promise.reject(goneError(instanceUuid));
    return this.api.instances.info(instanceUuid);
  }

  private wait<T>(
    options: StatusWaitOptions,
    description: string,
    lastSeen: () => string,
    spec: { instanceUuid: string; accept: (walk: Walk) => Promise<T | undefined> },
  ): Promise<T> {
    return new Promise<T>((settleResolve, settleReject) => {
      let lastFailure: string | undefined;
      const seen = () => (lastFailure ? `${lastSeen()}, then a poll failed (${lastFailure})` : lastSeen());
      const { signal } = options;
      const onAbort = (): void => {
        this.waiters.delete(waiter);
        settleReject(new OperationCancelledError(`while waiting for ${description}; last seen: ${seen()}`));
      };
      const resolve = (value: T): void => {
        signal?.removeEventListener("abort", onAbort);
        settleResolve(value);
      };
      const reject = (err: unknown): void => {
        signal?.removeEventListener("abort", onAbort);
        settleReject(err);
      };
      const waiter: Waiter = {
        after: this.walksStarted,
        pollIntervalMs: options.pollIntervalMs,
        deadline: Date.now() + options.timeoutMs,
        offer: async (walk) => {
          const done = await spec.accept(walk);
          lastFailure = undefined;
          if (done === undefined) return false;
          resolve(done);
          return true;
        },
        fail: reject,
        pollFailed: (err) => (lastFailure = err.message),
        timeOut: () =>
          reject(
            new TimeoutError({
              action: `wait for instance ${spec.instanceUuid}`,
              method: "GET",
              path: "/instance/list",
              lastSeen: seen(),
              message: `Could not wait for instance ${spec.instanceUuid}: timed out after ${Math.round(options.timeoutMs / 1000)} s waiting for ${description}; last seen: ${seen()}. Raise the timeout or check the resource in the console.`,
            }),
          ),
      };
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.add(waiter);
      this.schedulePoll();
    });
  }

  /** The walk that starts next: after a short window, or right after the one in flight. */
  private nextWalk(): Promise<Walk> {
    this.queued ??= (this.inFlight ? this.inFlight.then(noop, noop) : sleep(BATCH_WINDOW_MS)).then(() =>
      this.startWalk(),
    );
    return this.queued;
  }

  private startWalk(): Promise<Walk> {
    this.queued = undefined;
    const number = ++this.walksStarted;
    const startedAt = Date.now();
    const started: StartedWalk = {
      number,
      underWay: true,
      lastBusyAt: this.now(),
      writesEnded: this.api.writesEnded,
      walk: walkList(this.api),
      failed: false,
    };
    if (this.readsQueued) this.latest = started;
    this.readsQueued = false;
    const { walk } = started;
    let pages: number | undefined;
    const settled = walk.then(
      (w) => {
        started.underWay = false;
        started.lastBusyAt = this.now();
        pages = w.pages;
        for (const [uuid, instance] of w.instances) {
          this.listed.add(uuid);
          const created = instance.create_time;
          if (created !== undefined && (this.newestListed === undefined || created > this.newestListed))
            this.newestListed = created;
        }
        if (w.cloudMs !== undefined) this.lastCloudMs = Math.max(this.lastCloudMs ?? 0, w.cloudMs);
        return this.offerToWaiters(number, w);
      },
      (err: unknown) => {
        started.underWay = false;
        started.failed = true;
        this.failWaiters(number, err);
      },
    );
    this.inFlight = settled;
    void settled.then(() => {
      this.lastWalkEndedAt = Date.now();
      const pacing = this.api.pacingMs;
      this.lastWalkCostMs =
        pacing > 0 && pages !== undefined ? pages * pacing : this.lastWalkEndedAt - startedAt;
      if (this.inFlight === settled) this.inFlight = undefined;
      this.schedulePoll();
    });
    return walk;
  }

  private async offerToWaiters(number: number, walk: Walk): Promise<void> {
    await Promise.all(
      this.eligible(number).map(async (waiter) => {
        try {
          if (await waiter.offer(walk)) this.waiters.delete(waiter);
          else this.timeOutIfDue(waiter);
        } catch (err) {
          this.pollFailed(waiter, err);
        }
      }),
    );
  }

  /** A failed walk fails the waits it was meant to answer, unless the failure may pass (as pollUntil does). */
  private failWaiters(number: number, err: unknown): void {
    for (const waiter of this.eligible(number)) this.pollFailed(waiter, err);
  }

  private eligible(walkNumber: number): Waiter[] {
    return [...this.waiters].filter((w) => w.after < walkNumber);
  }

  private pollFailed(waiter: Waiter, err: unknown): void {
    if (isTransientError(err)) {
      waiter.pollFailed(err);
      this.timeOutIfDue(waiter);
      return;
    }
    this.waiters.delete(waiter);
    waiter.fail(err);
  }

  private timeOutIfDue(waiter: Waiter): void {
    if (Date.now() < waiter.deadline) return;
    this.waiters.delete(waiter);
    waiter.timeOut();
  }

  /**
   * One walk per poll interval while anything waits, counted from the end of the last walk (as
   * client.instances.waitForStatus sleeps after each poll), and later still when walks are slow (see
   * POLL_SHARE). Walks started by reads count too.
   */
  private schedulePoll(): void {
    if (this.pollTimer || this.waiters.size === 0) return;
    const interval = Math.min(...[...this.waiters].map((w) => w.pollIntervalMs));
    const pause = Math.max(interval, this.lastWalkCostMs * (1 / POLL_SHARE - 1));
    const dueIn = Math.max(0, this.lastWalkEndedAt + pause - Date.now());
    this.pollTimer = setTimeout(() => {
      this.pollTimer = undefined;
      if (this.waiters.size > 0 && !this.queued) this.nextWalk().catch(noop);
    }, dueIn);
  }
}

function noop(): void {}

const LIST = { action: "list instances", method: "GET", path: "/instance/list" };

/**
 * Walks every page of /instance/list as the SDK's walks do (walkEnds: it ends on an empty page, or a
 * short one that reaches the total, never on the total alone; nextPageSize: a short first page short of
 * the total shows the server's page size), and says whether the pages fit together. A list that never
 * ends fails at the SDK's page bound, DEFAULT_MAX_PAGES, with UnendingListError.
 */
export async function walkList(
  api: GpuCloudClient,
  pageSize = LIST_PAGE_SIZE,
  maxPages = DEFAULT_MAX_PAGES,
): Promise<Walk> {
  const instances = new Map<string, Instance>();
  let consistent = true;
  let total: number | undefined;
  let collected = 0;
  let firstPageCount = 0;
  let pages = 0;
  let size = pageSize;
  let shortPageSeen = false;
  for (;;) {
    if (pages === maxPages) throw unendingList({ ...LIST, pages: maxPages, pageSize: size });
    const res = await api.instances.list({ page: ++pages, page_size: size });
    const count = res.instance_list.length;
    if (total !== undefined && res.total !== total) consistent = false;
    // A page with items after a short one: the list grew under the walk, or its pages do not fit ours.
    if (shortPageSeen && count > 0) consistent = false;
    total ??= res.total;
    for (const instance of res.instance_list) {
      if (instances.has(instance.instance_uuid)) consistent = false;
      instances.set(instance.instance_uuid, instance);
    }
    collected += count;
    if (pages === 1) firstPageCount = count;
    const read = { page: pages, items: count, pageSize: size, collected, total: res.total };
    if (walkEnds(read)) break;
    size = nextPageSize(read);
    shortPageSeen ||= count < size;
  }
  // Asked for more than it held, and the next offset held nothing: the first page was the whole list.
  const atomic = firstPageCount < pageSize && collected === firstPageCount;
  return { instances, consistent, atomic, pages, cloudMs: api.cloudNow() };
}
