/**
 * @module http/rest-front/live-prices
 * `POST /clob/market-prices/batch` answered from the relay's live price streams when every market
 * asked for has one that is `live`: the request the price poller makes anyway, so a dashboard's
 * batch costs upstream nothing. Upstream's shape (docs/upstream.md): one entry per market, its
 * price fields as upstream last sent them, `timestamp` the time of that upstream snapshot.
 */
import {
  MARKET_ID_PATTERN,
  MAX_MARKETS_PER_REQUEST,
} from '../../../packages/protocol/src/protocol/limits.ts';
import { thresholdChannel } from '../../relay/channels/relay-registry.ts';
import type { StreamRegistry } from '../../relay/streams/registry.ts';

export const LIVE_PRICES_PATH = '/clob/market-prices/batch';

/** The response text, or undefined when the request must go to upstream. */
export function livePriceBatch(registry: StreamRegistry, body: unknown): string | undefined {
  const marketIds = requestedMarkets(body);
  if (marketIds === undefined) return undefined;
  const data = [];
  for (const market of marketIds) {
    const [stream] = registry.streamsOf(thresholdChannel, market);
    if (stream?.state === undefined || stream.freshness !== 'live') return undefined;
    data.push({ market_id: market, ...stream.state, timestamp: stream.ts });
  }
  return JSON.stringify({ data });
}

/** A body upstream would accept; anything else goes to upstream, which answers its own 400. */
function requestedMarkets(body: unknown): string[] | undefined {
  if (typeof body !== 'object' || body === null || !('market_ids' in body)) return undefined;
  const ids = body.market_ids;
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_MARKETS_PER_REQUEST) return undefined;
  if (!ids.every((id): id is string => typeof id === 'string' && MARKET_ID_PATTERN.test(id)))
    return undefined;
  return ids;
}
