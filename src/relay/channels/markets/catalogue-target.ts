/**
 * @module relay/catalogue-target
 * The `markets` channel's target (docs/protocol.md "`markets` data"): upstream's market catalogue,
 * every page of it, as one map of list-form records keyed by market id. A stream id is the
 * catalogue's filter (protocol/channels.ts: upstream's `statusFilter`, and `tokenId` after `:`).
 * One poll reads the pages newest first, 100 markets asked each, each page from where the markets
 * served so far end (upstream's largest page is not shown: upstream/paging.ts), until upstream says
 * there is no more: a market added while they are read pushes the others to later pages, so it may
 * show one twice (the map keeps one) but never hides one. When the pages still hold fewer markets than upstream's
 * `total` (a market left a filtered list meanwhile), the poll reads them again once.
 */
import { catalogueFilterOf } from '../../../../packages/protocol/src/protocol/channels.ts';
import type { MarketsData } from '../../../../packages/protocol/src/protocol/messages.ts';
import { readPages } from '../../../upstream/paging.ts';
import { type MarketListItem, type MarketsResponse, marketsResponse } from '../../../upstream/schemas.ts';
import type { PollContext } from '../../poll/poll-target.ts';
import type { TargetTiming } from '../../poll/scheduler.ts';
import { StreamTarget, type StreamTargetChannel } from '../../poll/stream-target.ts';

/** Markets asked per request; upstream may serve fewer, and each page starts where the last one's ended. */
const CATALOGUE_PAGE = 100;
/** The catalogue stops reading beyond (as relay/admission/known-markets.ts does). */
export const CATALOGUE_MAX_MARKETS = 10_000;

export class CatalogueTarget extends StreamTarget<'markets', MarketsResponse> {
  protected readonly schema = marketsResponse;

  constructor(streamId: string, timing: TargetTiming, context: PollContext) {
    super('markets', streamId, timing, context);
  }

  /** Every page, as one response whose `markets` hold them all. */
  protected async ask(): Promise<MarketsResponse> {
    const first = await this.#readAll();
    const { total } = first.pagination;
    if (first.markets.length >= Math.min(total, CATALOGUE_MAX_MARKETS)) return first;
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
    const served: MarketsResponse[] = [];
    const markets = new Map<string, MarketListItem>();
    await readPages(
      async (offset, limit) => {
        const page = await this.source.markets({
          limit,
          offset,
          sortBy: 'newest',
          statusFilter: filter.status,
          ...(filter.token === undefined ? {} : { tokenId: filter.token }),
        });
        served.push(page);
        return { entries: page.markets, hasMore: page.pagination.hasMore };
      },
      { limit: CATALOGUE_PAGE, maxEntries: CATALOGUE_MAX_MARKETS },
      (page) => {
        for (const market of page.entries) {
          const id = market.market_id.toLowerCase();
          if (!markets.has(id)) markets.set(id, market);
        }
      },
    );
    // readPages reads at least one page.
    const first = served[0]!;
    const { hasMore } = served.at(-1)!.pagination;
    return { ...first, markets: [...markets.values()], pagination: { ...first.pagination, hasMore } };
  }
}

/** The `markets` channel's streams, one target per catalogue filter. */
export const marketsTargets: StreamTargetChannel = {
  channel: 'markets',
  create: (id, timing, context) => new CatalogueTarget(id, timing, context),
};
