/**
 * @module relay/catalogue-target
 * The `markets` channel's target (docs/protocol.md "`markets` data"): upstream's market catalogue,
 * every page of it, as one map of list-form records keyed by market id. A stream id is the
 * catalogue's filter (protocol/channels.ts: upstream's `statusFilter`, and `tokenId` after `:`).
 * One poll reads the pages newest first, 100 markets each, until upstream says there is no more:
 * a market added while they are read pushes the others to later pages, so it may show one twice
 * (the map keeps one) but never hides one. When the pages still hold fewer markets than upstream's
 * `total` (a market left a filtered list meanwhile), the poll reads them again once.
 */
import { catalogueFilterOf } from '../../protocol/channels.ts';
import type { MarketsData } from '../../protocol/messages.ts';
import { type MarketsResponse, marketsResponse } from '../../upstream/schemas.ts';
import type { TargetTiming } from '../poll/scheduler.ts';
import type { PollContext } from './poll-target.ts';
import { StreamTarget } from './stream-target.ts';

export const CATALOGUE_PAGE = 100;
/** 10,000 markets: the catalogue stops reading beyond (as relay/admission/known-markets.ts does). */
export const CATALOGUE_MAX_PAGES = 100;

export class CatalogueTarget extends StreamTarget<'markets', MarketsResponse> {
  protected readonly schema = marketsResponse;

  constructor(streamId: string, timing: TargetTiming, context: PollContext) {
    super('markets', streamId, timing, context);
  }

  /** Every page, as one response whose `markets` hold them all. */
  protected async ask(): Promise<MarketsResponse> {
    const first = await this.#readAll();
    const { total } = first.pagination;
    if (first.markets.length >= Math.min(total, CATALOGUE_PAGE * CATALOGUE_MAX_PAGES)) return first;
    return this.#readAll();
  }

  /** Keyed by market id in its one spelling (lower case), each record as upstream served it. */
  protected stateOf(response: MarketsResponse): MarketsData {
    const state: MarketsData = {};
    for (const record of response.markets) state[record.market_id.toLowerCase()] = { ...record };
    return state;
  }

  /** The list carries no time of its own. */
  protected tsOf(): undefined {
    return undefined;
  }

  async #readAll(): Promise<MarketsResponse> {
    // The registry only holds ids canonicalStreamId accepted.
    const filter = catalogueFilterOf(this.streamId) ?? { status: 'all' };
    const read = (page: number) =>
      this.source.markets({
        limit: CATALOGUE_PAGE,
        offset: page * CATALOGUE_PAGE,
        sortBy: 'newest',
        statusFilter: filter.status,
        ...(filter.token === undefined ? {} : { tokenId: filter.token }),
      });
    const first = await read(0);
    const markets = [...first.markets];
    const seen = new Set(markets.map((market) => market.market_id.toLowerCase()));
    let last = first;
    for (
      let page = 1;
      page < CATALOGUE_MAX_PAGES && last.pagination.hasMore && last.markets.length > 0;
      page++
    ) {
      last = await read(page);
      for (const market of last.markets) {
        const id = market.market_id.toLowerCase();
        if (seen.has(id)) continue;
        seen.add(id);
        markets.push(market);
      }
    }
    return { ...first, markets, pagination: { ...first.pagination, hasMore: last.pagination.hasMore } };
  }
}
