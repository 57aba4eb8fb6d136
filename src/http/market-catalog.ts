/**
 * @module http/market-catalog
 * The upstream's active markets for the status page's market picker (`GET /status/markets`), read
 * through `GET /api/markets` (by volume, 100 a page) and cached briefly, so that a page left open
 * costs upstream a few requests a minute, not one per viewer per second.
 */
import type { FastifyInstance } from 'fastify';
import type { UpstreamClient } from '../upstream/client.ts';

/** How long a loaded list is served before upstream is asked again. */
export const CATALOG_TTL_MS = 30_000;
/** The picker lists at most this many markets (5 upstream pages). */
const MAX_MARKETS = 500;
const PAGE = 100;

export interface CatalogMarket {
  id: string;
  title: string;
  status: string;
  volume: number;
}

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
    for (let offset = 0; offset < MAX_MARKETS; offset += PAGE) {
      const page = await this.#client.markets({
        limit: PAGE,
        offset,
        sortBy: 'volume',
        statusFilter: 'active',
      });
      for (const market of page.markets) {
        markets.push({
          id: market.market_id,
          title: market.title,
          status: market.status,
          volume: market.volume,
        });
        this.#titles.set(market.market_id, market.title);
      }
      if (!page.pagination.hasMore) break;
    }
    this.#loaded = { at: this.#now(), markets };
    return markets;
  }
}

/** `GET /status/markets[?q=text]`: the picker's list, filtered by title when `q` is given. */
export function registerMarketCatalog(app: FastifyInstance, catalog: MarketCatalog): void {
  app.get('/status/markets', async (request, reply) => {
    const query = (request.query as Record<string, unknown> | undefined)?.q;
    const needle = typeof query === 'string' ? query.trim().toLowerCase() : '';
    try {
      const markets = await catalog.markets();
      return {
        markets:
          needle === '' ? markets : markets.filter((market) => market.title.toLowerCase().includes(needle)),
      };
    } catch (error) {
      return reply.code(502).send({
        error: 'upstream_unavailable',
        message: `could not list upstream markets: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
  });
}
