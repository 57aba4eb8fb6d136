/**
 * @module upstream/paging
 * Reading one of upstream's paginated lists (`pagination: {limit, offset, hasMore, total?}`) as
 * upstream serves it, for every paged read of the relay: the catalogue, the status page's picker,
 * the known-markets list and the activity walks. The interface does not show the largest page of
 * most lists, and a service may serve fewer entries than asked (saying so in `pagination.limit`):
 * so each page is asked at the offset where the entries served so far end, never at a multiple of
 * the page size asked, and bounds count entries, never pages, so that a promise such as "the
 * whole catalogue" or "trades lost only beyond 500" holds whatever page size upstream serves.
 */

/** One page as upstream served it. */
export interface ServedPage<T> {
  readonly entries: readonly T[];
  /** Upstream's `pagination.hasMore`: false at the end of the list. */
  readonly hasMore: boolean;
}

/** Asks upstream for the page of up to `limit` entries starting at `offset`. */
export type ReadPage<T> = (offset: number, limit: number) => Promise<ServedPage<T>>;

export interface PagingOptions {
  /** Offset of the first page (0 by default). */
  from?: number;
  /** Entries asked per request: upstream may serve fewer (or more). */
  limit: number;
  /** Entries read at most; the last request asks only for as many as are still allowed. */
  maxEntries: number;
}

/** How a read of pages stopped. */
export type PagingStop =
  /** Upstream said there is no more (`hasMore` false), or served an empty page. */
  | 'end'
  /** The caller's `onPage` asked to stop. */
  | 'caller'
  /** `maxEntries` were read while upstream had more. */
  | 'bound';

export interface PagingResult {
  stopped: PagingStop;
  /** Requests made. */
  requests: number;
  /** Entries read. */
  entries: number;
  /** The offset just past the last entry read. */
  end: number;
}

/**
 * Reads pages from `from` on, each at the offset where the previous one's entries ended, handing
 * each to `onPage` (with its offset) until upstream has no more, `onPage` returns `true`, or
 * `maxEntries` were read.
 */
export async function readPages<T>(
  read: ReadPage<T>,
  { from = 0, limit, maxEntries }: PagingOptions,
  onPage: (page: ServedPage<T>, offset: number) => unknown,
): Promise<PagingResult> {
  let offset = from;
  let entries = 0;
  let requests = 0;
  for (;;) {
    if (entries >= maxEntries) return { stopped: 'bound', requests, entries, end: offset };
    const page = await read(offset, Math.min(limit, maxEntries - entries));
    requests += 1;
    const stop = onPage(page, offset) === true;
    entries += page.entries.length;
    offset += page.entries.length;
    if (!page.hasMore || page.entries.length === 0) return { stopped: 'end', requests, entries, end: offset };
    if (stop) return { stopped: 'caller', requests, entries, end: offset };
  }
}
