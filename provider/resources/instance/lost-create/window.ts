/**
 * The window of a create whose answer was lost: the instances it may have made, told apart from the
 * others by what the cloud itself shows, never by this machine's clock or the cloud's Date header
 * (the two clocks may disagree by an hour, and a cloud may send no Date at all):
 * - its start: the newest create time listed before the call was sent. Anything the call made was created
 *   later, on the same clock that stamps every create time; instances listed before are not its own.
 * - its end: the newest create time in the first consistent listing begun after the call settled (it was
 *   carried out by then or never will be). Anything created later is someone else's; in that very second
 *   only the instances that listing showed can be the call's.
 * An instance without a create time can only be ruled out by the listing taken before the call.
 */
import type { Instance as CloudInstance } from "../../../../sdk";

export interface CreateWindow {
  /** Cloud Unix seconds; undefined when nothing listed before the call had a create time. */
  start?: number;
  /** Listed before the call was sent: not made by it. */
  listedBefore: ReadonlySet<string>;
  /** A listing begun after the call settled was read: `end` and `listedAtEnd` hold. */
  closed: boolean;
  /** Cloud Unix seconds; undefined while open, or when the closing listing showed no create time. */
  end?: number;
  /** What the closing listing showed in the second `end` (all of it, without an end). */
  listedAtEnd: ReadonlySet<string>;
}

/** A window opened by the listings taken before the call. */
export function openWindow(
  newestCreateTime: number | undefined,
  listedBefore: Iterable<string>,
): CreateWindow {
  return {
    start: newestCreateTime,
    listedBefore: new Set(listedBefore),
    closed: false,
    listedAtEnd: new Set(),
  };
}

/** The newest create time among `instances`; undefined when none has one. */
export function newestCreateTime(instances: Iterable<CloudInstance>): number | undefined {
  let newest: number | undefined;
  for (const i of instances) {
    if (i.create_time !== undefined && (newest === undefined || i.create_time > newest))
      newest = i.create_time;
  }
  return newest;
}

/** `window` closed by `listing`, a consistent listing begun after the call settled. */
export function closedBy(window: CreateWindow, listing: Iterable<CloudInstance>): CreateWindow {
  const instances = [...listing];
  const end = newestCreateTime(instances);
  const atEnd = instances.filter((i) => i.create_time === end).map((i) => i.instance_uuid);
  return { ...window, closed: true, end, listedAtEnd: new Set(atEnd) };
}

/**
 * Whether the call may have made `instance`. `earlierRun`: the window comes from a state, so the
 * listing before the call is known only in part and an instance without a create time is not admitted.
 */
export function inWindow(window: CreateWindow, instance: CloudInstance, earlierRun: boolean): boolean {
  const uuid = instance.instance_uuid;
  if (window.listedBefore.has(uuid)) return false;
  const created = instance.create_time;
  if (created !== undefined && window.start !== undefined && created < window.start) return false;
  if (window.closed && (created === undefined || created === window.end)) return window.listedAtEnd.has(uuid);
  if (created === undefined) return !earlierRun;
  if (!window.closed) return true;
  return window.end !== undefined && created < window.end;
}
