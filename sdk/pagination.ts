/**
 * Walks every page of a list endpoint. Pages start at 1. The rule of every walk over the API's lists
 * (`walkEnds`, which the provider's own walk of the instance list keeps too):
 * - an empty page ends the walk;
 * - a full page never does, whatever `total` says: a total may count what the list never shows (the live
 *   service is reported to count hidden instances in /instance/list) or lag behind it;
 * - a short page ends it once the walk has collected `total` items (or the server gave no total); short
 *   of `total`, one more page is asked for. An account whose total counts a hidden item pays that one
 *   request more per walk (the empty page that ends it).
 * - a first page shorter than asked while the total says there is more shows the server's own page size
 *   (the API does not show most endpoints' maximum page_size): the walk goes on in pages of that size
 *   (`nextPageSize`), whose offsets then fit what it has, instead of skipping what lies between.
 * A server that answers every page full (one that ignores `page`) meets the hard bound, `maxPages`
 * (DEFAULT_MAX_PAGES): the walk fails there with UnendingListError rather than end as though the pages
 * read were the whole list.
 */

import { unendingList, type ErrorContext } from "./errors";
import type { CallOptions } from "./transport";

export interface Page<T> {
  items: T[];
  total?: number;
}

export type PageFetcher<T> = (page: number, pageSize: number) => Promise<Page<T>>;

/** The walk's own options; its signal and deadline go to every page's call. */
export interface PaginateOptions extends CallOptions {
  pageSize?: number;
  /** Hard stop: a walk that would need more pages fails with UnendingListError. */
  maxPages?: number;
}

export const DEFAULT_PAGE_SIZE = 100;
/** 100 000 items at 100 a page: far beyond any account's list. */
export const DEFAULT_MAX_PAGES = 1_000;

/** One page as a walk has just read it. */
export interface PageRead {
  /** Its number, from 1. */
  page: number;
  /** Items on this page. */
  items: number;
  /** The page size asked for. */
  pageSize: number;
  /** Items collected by the walk so far, this page's included. */
  collected: number;
  /** The total this page reported, if any. */
  total?: number;
}

/** Whether the page just read is the list's last (see the rule in this module's header). */
export function walkEnds({ items, pageSize, collected, total }: PageRead): boolean {
  if (items === 0) return true;
  if (items >= pageSize) return false;
  return total === undefined || collected >= total;
}

/** The page size to ask for after a page that did not end the walk (see the rule in this module's header). */
export function nextPageSize({ page, items, pageSize }: PageRead): number {
  return page === 1 && items > 0 && items < pageSize ? items : pageSize;
}

/** What a walk reads, for its error at the bound. */
const GENERIC_LIST: ErrorContext = { action: "walk the list", method: "GET", path: "" };

export async function* paginate<T>(
  fetchPage: PageFetcher<T>,
  options: PaginateOptions = {},
  list: ErrorContext = GENERIC_LIST,
): AsyncGenerator<T> {
  const maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
  let pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  let collected = 0;
  for (let page = 1; ; page++) {
    if (page > maxPages) throw unendingList({ ...list, pages: maxPages, pageSize });
    const { items, total } = await fetchPage(page, pageSize);
    for (const item of items) yield item;
    collected += items.length;
    const read = { page, items: items.length, pageSize, collected, total };
    if (walkEnds(read)) return;
    pageSize = nextPageSize(read);
  }
}

/** Collects an async iterable into an array. */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}
