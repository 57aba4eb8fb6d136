/**
 * @module relay/admission/known-markets
 * What the relay knows of upstream's market catalogue: every market id `GET /api/markets` lists
 * (all statuses, 100 a page asked for; upstream's largest page is not shown, so each page starts
 * where the previous one's markets ended: upstream/paging.ts), reloaded every minute. A
 * subscription to an id the catalogue lacks is judged without polling it (relay/admission/market.ts);
 * until the first load succeeds the catalogue cannot judge anything, and says so. A list read before a market's stream began may predate the
 * market itself: asked with the `loadsBegun` the stream noted when it began, such a list says only
 * `not_listed_earlier`; a load begun later decides: the usual schedule's, or one `loadSoon` brings
 * forward, at most one per {@link EARLY_LOAD_GAP_MS} however many ids ask (a client naming random ids
 * must not make the relay page through the catalogue for each).
 */
import { readPages } from '../../upstream/paging.ts';
import type { MarketsResponse } from '../../upstream/schemas.ts';

export interface CatalogueSource {
  markets(query: { limit: number; offset: number; statusFilter: 'all' }): Promise<MarketsResponse>;
}

export type CatalogueVerdict = 'listed' | 'not_listed' | 'not_listed_earlier' | 'unknown';

const PAGE = 100;
/** Markets read at most: beyond that the catalogue cannot judge the rest. */
const MAX_MARKETS = 10_000;
export const CATALOGUE_REFRESH_MS = 60_000;
/** The shortest time from one load's start to an early one's. */
export const EARLY_LOAD_GAP_MS = 10_000;

export class KnownMarkets {
  readonly #source: CatalogueSource;
  #ids: Set<string> | undefined;
  #complete = false;
  /** Loads begun so far, and the number of the one whose list is held (1 for the first). */
  #loadsBegun = 0;
  #listLoad = 0;
  #lastBeganAt = Number.NEGATIVE_INFINITY;
  #timer: NodeJS.Timeout | undefined;
  #loading: Promise<void> | undefined;
  readonly #now: () => number;

  constructor(source: CatalogueSource, now: () => number = Date.now) {
    this.#source = source;
    this.#now = now;
  }

  /** Loads now (without waiting for it) and again every `everyMs`. */
  start(everyMs = CATALOGUE_REFRESH_MS): void {
    void this.refresh();
    this.#timer = setInterval(() => void this.refresh(), everyMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  get size(): number {
    return this.#ids?.size ?? 0;
  }

  /** Loads begun so far: what a stream notes when it begins, to be judged later by `verdict`. */
  get loadsBegun(): number {
    return this.#loadsBegun;
  }

  /**
   * Whether the catalogue lists `market`. `since`: the `loadsBegun` noted when the market's stream
   * began; a list whose load began no later says `not_listed_earlier` instead of `not_listed`.
   */
  verdict(market: string, since?: number): CatalogueVerdict {
    if (this.#ids === undefined) return 'unknown';
    if (this.#ids.has(market)) return 'listed';
    if (!this.#complete) return 'unknown';
    return since === undefined || this.#listLoad > since ? 'not_listed' : 'not_listed_earlier';
  }

  /**
   * A market upstream's catalogue listed since the last load (a wildcard subscription saw it in the
   * `markets` channel): listed from now on, not judged unknown until the next load finds it.
   */
  learn(market: string): void {
    if (this.#ids === undefined) this.#ids = new Set([market]);
    else this.#ids.add(market);
  }

  /**
   * A load now, ahead of the schedule, for a verdict a newer list would decide; none while one runs
   * or within {@link EARLY_LOAD_GAP_MS} of the last one's start.
   */
  loadSoon(): void {
    if (this.#loading !== undefined || this.#now() - this.#lastBeganAt < EARLY_LOAD_GAP_MS) return;
    void this.refresh();
  }

  /** One load at a time; a failed load keeps the previous catalogue. */
  refresh(): Promise<void> {
    this.#loading ??= this.#load()
      .catch(() => {
        // Upstream down or the list malformed: judge from the last good catalogue meanwhile.
      })
      .finally(() => {
        this.#loading = undefined;
      });
    return this.#loading;
  }

  async #load(): Promise<void> {
    const load = ++this.#loadsBegun;
    this.#lastBeganAt = this.#now();
    const ids = new Set<string>();
    const read = await readPages(
      async (offset, limit) => {
        const response = await this.#source.markets({ limit, offset, statusFilter: 'all' });
        return { entries: response.markets, hasMore: response.pagination.hasMore };
      },
      { limit: PAGE, maxEntries: MAX_MARKETS },
      (page) => {
        for (const market of page.entries) ids.add(market.market_id.toLowerCase());
      },
    );
    const complete = read.stopped === 'end';
    this.#ids = ids;
    this.#complete = complete;
    this.#listLoad = load;
  }
}
