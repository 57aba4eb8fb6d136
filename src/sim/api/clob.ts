/**
 * @module sim/api/clob
 * The public CLOB endpoints (docs/upstream.md "What the relay uses", and its errors): the order
 * book of one market and the batch of price snapshots.
 */

import type { ClobPriceBatchResponse, OrderBook } from '../../upstream/schemas.ts';
import type { MarketSimulation } from '../market-simulation.ts';
import { clobPriceOf, orderBookOf } from '../snapshots.ts';
import { badRequest, ok, parseMarketIdsBody, requireMarket } from './http.ts';
import { get, post, type Route } from './router.ts';

/** Upstream limit: at most 100 market IDs per batch request. */
export const CLOB_BATCH_MAX = 100;

export function clobRoutes(sim: MarketSimulation): Route[] {
  return [
    get('/clob/orderbook', (request) => {
      const marketId = request.query.market_id;
      if (marketId === undefined || marketId === '') throw badRequest('market_id is required');
      const body: OrderBook = orderBookOf(requireMarket(sim, marketId, 'market_id'));
      return ok(body);
    }),
    post('/clob/market-prices/batch', (request) => {
      const ids = parseMarketIdsBody(request, CLOB_BATCH_MAX);
      // Unknown (or removed) markets have no entry; known ones always do (docs/upstream.md).
      const data = ids.flatMap((id) => {
        const market = sim.market(id);
        return market ? [clobPriceOf(market)] : [];
      });
      const body: ClobPriceBatchResponse = { data };
      return ok(body);
    }),
  ];
}
