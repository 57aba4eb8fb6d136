/**
 * @module sim/api/clob
 * The public CLOB endpoints (upstream-api.md section 4 "CLOB", errors of section 7): the order
 * book of one market and the batch of price snapshots.
 */

import type { ClobPriceBatchResponse, OrderBook } from '../../upstream/schemas.ts';
import type { MarketSimulation } from '../market-simulation.ts';
import { clobPriceOf, orderBookOf } from '../snapshots.ts';
import { badRequest, ok, parseMarketIdsBody, requireMarket } from './http.ts';
import type { Route } from './router.ts';

/** Section 8: at most 100 market IDs per batch request. */
export const CLOB_BATCH_MAX = 100;

export function clobRoutes(sim: MarketSimulation): Route[] {
  return [
    {
      method: 'GET',
      path: '/clob/orderbook',
      handler: (request) => {
        const marketId = request.query.market_id;
        if (marketId === undefined || marketId === '') throw badRequest('market_id is required');
        const body: OrderBook = orderBookOf(requireMarket(sim, marketId, 'market_id'));
        return ok(body);
      },
    },
    {
      method: 'POST',
      path: '/clob/market-prices/batch',
      handler: (request) => {
        const ids = parseMarketIdsBody(request, CLOB_BATCH_MAX);
        // Unknown (or removed) markets have no entry; known ones always do (section 4).
        const data = ids.flatMap((id) => {
          const market = sim.market(id);
          return market ? [clobPriceOf(market)] : [];
        });
        const body: ClobPriceBatchResponse = { data };
        return ok(body);
      },
    },
  ];
}
