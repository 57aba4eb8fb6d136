/**
 * @module sim/api/catalog
 * Search, the token catalogue and oracle prices, and health (docs/upstream.md "Search and
 * tokens", "Health").
 */
import type {
  SearchResponse,
  TokenPriceResponse,
  TokenResponse,
  TokensResponse,
  UpstreamHealth,
} from '../../upstream/schemas.ts';
import { ORACLE_EXPO, type SimToken } from '../catalog.ts';
import { formatFixed } from '../fixed-point.ts';
import type { MarketSimulation } from '../market-simulation.ts';
import type { SimulatorProfile } from '../profile.ts';
import { isoTime } from '../snapshots.ts';
import { malformedId, ok, unknownId } from './http.ts';
import { get, type Route } from './router.ts';

/** Not shown upstream: each result list of a search is capped here. */
export const SEARCH_RESULTS_MAX = 20;

function tokenOf(token: SimToken): TokensResponse['tokens'][number] {
  return {
    id: token.id,
    oracle_feed_id: token.oracleFeedId,
    symbol: token.symbol,
    name: token.name,
    asset_type: token.assetType,
  };
}

function matches(text: string, needle: string): boolean {
  return text.toLowerCase().includes(needle);
}

export function catalogRoutes(sim: MarketSimulation, profile: SimulatorProfile): Route[] {
  return [
    get('/health', () => {
      const body: UpstreamHealth = {
        status: profile.healthStatus,
        timestamp: isoTime(sim.now()),
        services: { database: true, message_queue: true, settlement: true },
      };
      return ok(body);
    }),
    get('/api/search', (request) => {
      // An empty search text finds nothing rather than everything.
      const needle = (request.query.q ?? '').trim().toLowerCase();
      const found = <T>(items: readonly T[], text: (item: T) => string[]): T[] =>
        needle === ''
          ? []
          : items
              .filter((item) => text(item).some((value) => matches(value, needle)))
              .slice(0, SEARCH_RESULTS_MAX);
      const body: SearchResponse = {
        success: true,
        results: {
          markets: found(sim.markets(), (market) => [market.title]).map((market) => ({
            market_id: market.id,
            title: market.title,
            status: market.status,
          })),
          users: found(sim.users, (user) => [user.username]).map((user) => ({
            user_id: user.userId,
            username: user.username,
            wallet_address: user.walletAddress,
          })),
          tokens: found(sim.tokens, (token) => [token.symbol, token.name]).map((token) => ({
            id: token.id,
            symbol: token.symbol,
            name: token.name,
            asset_type: token.assetType,
          })),
        },
      };
      return ok(body);
    }),
    get('/api/tokens', (request) => {
      const needle = (request.query.query ?? '').trim().toLowerCase();
      const tokens = sim.tokens.filter(
        (token) => needle === '' || matches(token.symbol, needle) || matches(token.name, needle),
      );
      const body: TokensResponse = { success: true, tokens: tokens.map(tokenOf) };
      return ok(body);
    }),
    get('/api/tokens/price/:feedId', (_request, params) => {
      const feedId = params.feedId!;
      if (!/^0x[0-9a-fA-F]+$/.test(feedId)) throw malformedId('feedId must be a hex string (0x...)');
      const token = sim.tokens.find((candidate) => candidate.oracleFeedId === feedId.toLowerCase());
      if (!token) throw unknownId(`price feed ${feedId} not found`);
      const body: TokenPriceResponse = {
        success: true,
        feed_id: token.oracleFeedId,
        price: Number(formatFixed(token.rawPrice, -ORACLE_EXPO)),
        raw_price: token.rawPrice.toString(),
        expo: ORACLE_EXPO,
        publish_time: Math.floor(token.publishedAt / 1000),
      };
      return ok(body);
    }),
    get('/api/tokens/:id', (_request, params) => {
      const id = params.id!;
      if (!/^\d{1,9}$/.test(id)) throw malformedId('token id must be an integer');
      const token = sim.tokens.find((candidate) => candidate.id === Number(id));
      if (!token) throw unknownId(`token ${id} not found`);
      const body: TokenResponse = {
        success: true,
        token: {
          ...tokenOf(token),
          logo_url: `https://assets.example.com/tokens/${token.symbol.toLowerCase()}.png`,
          country: token.country,
          sector: token.sector,
        },
      };
      return ok(body);
    }),
  ];
}
