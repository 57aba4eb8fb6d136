/**
 * @module sim/api/market-data
 * The market data proxy (docs/upstream.md "Market data proxy"): one snapshot, or a batch.
 * Its snapshot requires every price, so a market without a two-sided quote is answered 404 alone
 * and left out of a batch (docs/upstream.md).
 */

import type { MarketDataBatchResponse, MarketDataSnapshot } from '../../upstream/schemas.ts';
import type { MarketSimulation } from '../market-simulation.ts';
import { marketDataOf } from '../snapshots.ts';
import { notFound, ok, parseMarketIdsBody, requireMarket } from './http.ts';
import { get, post, type Route } from './router.ts';

/** Not shown upstream; the simulator uses the CLOB batch's limit. */
export const MARKET_DATA_BATCH_MAX = 100;

export function marketDataRoutes(sim: MarketSimulation): Route[] {
  return [
    get('/api/market-data/:marketId', (_request, params) => {
      const marketId = params.marketId!;
      const body: MarketDataSnapshot | undefined = marketDataOf(requireMarket(sim, marketId, 'marketId'));
      if (!body) throw notFound(`market ${marketId} has no price data`);
      return ok(body);
    }),
    post('/api/market-data/batch', (request) => {
      const ids = parseMarketIdsBody(request, MARKET_DATA_BATCH_MAX);
      const data = ids.flatMap((id) => {
        const market = sim.market(id);
        const snapshot = market ? marketDataOf(market) : undefined;
        return snapshot ? [snapshot] : [];
      });
      const body: MarketDataBatchResponse = { success: true, data };
      return ok(body);
    }),
  ];
}
