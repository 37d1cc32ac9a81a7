/**
 * One fetch per catalogue per program run. The pod, GPU and market image catalogues and published
 * workflow details do not change while a Pulumi program runs, so every lookup shares one in-flight
 * promise per (base URL, endpoint, filters). Personal images, instances and the balance do change
 * during a run (the program itself creates them), so they never come through here.
 *
 * The Pulumi CLI starts a fresh process for every run, so the process lifetime is the run. Programs
 * that run several times in one process (the Automation API's inline programs) call
 * `clearCatalogueCache()` between runs to see catalogue changes.
 */
import { createHash } from "node:crypto";

const entries = new Map<string, Promise<unknown>>();

export interface CatalogueKey {
  baseUrl: string;
  endpoint: string;
  filters?: Record<string, string | number | undefined>;
  /**
   * The API key, for answers that depend on the caller (a non-public workflow is visible to its
   * owner only). It enters the cache key only as a hash.
   */
  caller?: string;
}

export function cachedCatalogue<T>(key: CatalogueKey, load: () => Promise<T>): Promise<T> {
  const id = cacheId(key);
  const hit = entries.get(id);
  if (hit !== undefined) {
    return hit as Promise<T>;
  }
  const pending = load();
  entries.set(id, pending);
  // A failed fetch is not remembered: the next lookup tries again instead of replaying the error.
  pending.catch(() => {
    if (entries.get(id) === pending) {
      entries.delete(id);
    }
  });
  return pending;
}

/** Forgets every cached catalogue, so the next lookup fetches afresh. */
export function clearCatalogueCache(): void {
  entries.clear();
}

function cacheId({ baseUrl, endpoint, filters = {}, caller }: CatalogueKey): string {
  const setFilters = Object.entries(filters)
    .filter(([, value]) => value !== undefined && value !== "")
    .sort(([a], [b]) => a.localeCompare(b));
  const callerHash = caller === undefined ? null : createHash("sha256").update(caller).digest("hex");
  return JSON.stringify([baseUrl, endpoint, setFilters, callerHash]);
}
