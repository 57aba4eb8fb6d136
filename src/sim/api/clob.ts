/**
 * @module sim/api/clob
 * The public CLOB endpoints (docs/upstream.md "What the relay uses", and its errors): the order
 * book of one market and the batch of price snapshots, in the profile's form where the interface
 * leaves it open.
 */

import type { ClobPriceBatchResponse, ClobPriceSnapshot, OrderBook } from '../../upstream/schemas.ts';
import type { MarketSimulation } from '../market-simulation.ts';
import type { SimulatorProfile } from '../profile.ts';
import { clobPriceOf, isoTimeBatch, orderBookOf } from '../snapshots.ts';
import { badRequest, ok, parseMarketIdsBody, requireMarket } from './http.ts';
import { get, post, type Route } from './router.ts';

/** Upstream limit: at most 100 market IDs per batch request. */
export const CLOB_BATCH_MAX = 100;

export function clobRoutes(sim: MarketSimulation, profile: SimulatorProfile): Route[] {
  // "Most CLOB responses do not carry `success`": a profile may have them carry it.
  const clobBody = <T extends object>(body: T): T =>
    profile.clobSuccessField ? { success: true, ...body } : body;
  return [
    get('/clob/orderbook', (request) => {
      const marketId = request.query.market_id;
      if (marketId === undefined || marketId === '') throw badRequest('market_id is required');
      const body: OrderBook = orderBookOf(requireMarket(sim, marketId, 'market_id'));
      return ok(clobBody(body));
    }),
    post('/clob/market-prices/batch', (request) => {
      const ids = parseMarketIdsBody(request, CLOB_BATCH_MAX);
      // A known market always has its entry; an id that is not a market has none, or (a profile's
      // choice) an entry as bare as a market's without price data.
      const data = ids.flatMap((id): ClobPriceSnapshot[] => {
        const market = sim.market(id);
        if (market) return [clobPriceOf(market, profile.batchMilliseconds)];
        if (profile.batchUnknownMarket === 'omit') return [];
        return [{ market_id: id, timestamp: isoTimeBatch(sim.now(), profile.batchMilliseconds) }];
      });
      const body: ClobPriceBatchResponse = { data };
      return ok(clobBody(body));
    }),
  ];
}
