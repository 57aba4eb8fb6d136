/**
 * @module http/market-catalog
 * The upstream's markets, active, expired and resolved, for the status page's market picker
 * (`GET /status/markets`), read through `GET /api/markets` (by volume, page by page as upstream
 * serves them: upstream/paging.ts) and cached briefly, so that a page left open costs upstream a few requests a minute, not one per viewer per
 * second. Expired and resolved books are still served upstream, so they can be watched too.
 */
import type { FastifyInstance } from 'fastify';
import type { UpstreamClient } from '../upstream/client.ts';
import { readPages } from '../upstream/paging.ts';

/** How long a loaded list is served before upstream is asked again. */
export const CATALOG_TTL_MS = 30_000;
/** The picker lists at most this many markets. */
const MAX_MARKETS = 500;
/** Markets asked per request: upstream may serve fewer, each page starts where the last one's ended. */
const PAGE = 100;

export interface CatalogMarket {
  id: string;
  title: string;
  status: string;
  volume: number;
  /** ISO 8601: when the market expires or expired (titles of one asset differ only by it). */
  expiresAt: string;
}

/** `?status=` of `GET /status/markets`: the upstream statuses it selects. */
const STATUS_FILTERS: Record<string, readonly string[] | undefined> = {
  active: ['ACTIVE'],
  expired: ['EXPIRED'],
  resolved: ['RESOLVED'],
  all: undefined,
};

export class MarketCatalog {
  readonly #client: UpstreamClient;
  readonly #now: () => number;
  #loaded: { at: number; markets: CatalogMarket[] } | undefined;
  #loading: Promise<CatalogMarket[]> | undefined;
  readonly #titles = new Map<string, string>();

  constructor(client: UpstreamClient, now: () => number = Date.now) {
    this.#client = client;
    this.#now = now;
  }

  /** The cached list, reloaded when older than CATALOG_TTL_MS; concurrent callers share one load. */
  async markets(): Promise<CatalogMarket[]> {
    if (this.#loaded !== undefined && this.#now() - this.#loaded.at < CATALOG_TTL_MS)
      return this.#loaded.markets;
    this.#loading ??= this.#load().finally(() => {
      this.#loading = undefined;
    });
    return this.#loading;
  }

  /** A market's title if any list loaded so far had it (the status page labels streams with it). */
  title(id: string): string | undefined {
    return this.#titles.get(id);
  }

  async #load(): Promise<CatalogMarket[]> {
    const markets: CatalogMarket[] = [];
    await readPages(
      async (offset, limit) => {
        const page = await this.#client.markets({ limit, offset, sortBy: 'volume', statusFilter: 'all' });
        return { entries: page.markets, hasMore: page.pagination.hasMore };
      },
      { limit: PAGE, maxEntries: MAX_MARKETS },
      (page) => {
        for (const market of page.entries) {
          markets.push({
            id: market.market_id,
            title: market.title,
            status: market.status,
            volume: market.volume,
            expiresAt: market.expiration_timestamp,
          });
          this.#titles.set(market.market_id, market.title);
        }
      },
    );
    this.#loaded = { at: this.#now(), markets };
    return markets;
  }
}

/**
 * `GET /status/markets[?q=text][&status=active|expired|resolved|all]`: the picker's list, by
 * status (default `active`), filtered by title when `q` is given.
 */
export function registerMarketCatalog(app: FastifyInstance, catalog: MarketCatalog): void {
  app.get('/status/markets', async (request, reply) => {
    const query = (request.query as Record<string, unknown> | undefined) ?? {};
    const needle = typeof query.q === 'string' ? query.q.trim().toLowerCase() : '';
    const status = typeof query.status === 'string' ? query.status : 'active';
    if (!Object.hasOwn(STATUS_FILTERS, status)) {
      return reply.code(400).send({
        error: 'bad_request',
        message: `status: got ${JSON.stringify(status)}, expected one of ${Object.keys(STATUS_FILTERS).join(', ')}`,
      });
    }
    const statuses = STATUS_FILTERS[status];
    try {
      const markets = (await catalog.markets()).filter(
        (market) =>
          (statuses === undefined || statuses.includes(market.status)) &&
          (needle === '' || market.title.toLowerCase().includes(needle)),
      );
      return { markets };
    } catch (error) {
      return reply.code(502).send({
        error: 'upstream_unavailable',
        message: `could not list upstream markets: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
  });
}
