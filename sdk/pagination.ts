/**
 * Walks every page of a list endpoint. Pages start at 1. The walk stops when the
 * items collected reach `total`, on an empty page, on a short page when no total is given, or after a
 * hard page cap so a server that ignores `page` cannot loop us forever. With a total, a short page does
 * not end the walk: the API does not show most endpoints' maximum page_size, and a server that serves
 * fewer items than asked would otherwise be read as finished.
 */

import type { CallOptions } from "./transport";

export interface Page<T> {
  items: T[];
  total?: number;
}

export type PageFetcher<T> = (page: number, pageSize: number) => Promise<Page<T>>;

/** The walk's own options; its signal and deadline go to every page's call. */
export interface PaginateOptions extends CallOptions {
  pageSize?: number;
  /** Hard stop, whatever the server says. */
  maxPages?: number;
}

export const DEFAULT_PAGE_SIZE = 100;
const DEFAULT_MAX_PAGES = 10_000;

export async function* paginate<T>(
  fetchPage: PageFetcher<T>,
  options: PaginateOptions = {},
): AsyncGenerator<T> {
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
  let collected = 0;
  for (let page = 1; page <= maxPages; page++) {
    const { items, total } = await fetchPage(page, pageSize);
    for (const item of items) yield item;
    collected += items.length;
    if (items.length === 0) return;
    if (total === undefined ? items.length < pageSize : collected >= total) return;
  }
}

/** Collects an async iterable into an array. */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}
