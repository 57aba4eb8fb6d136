/**
 * @module sim/api/users
 * Public user profiles (docs/upstream.md "Public user profiles"): identity, the profile
 * bundle, stats, positions, activity and net-worth history, all read from the holdings ledger.
 */
import type {
  NetWorthHistoryResponse,
  NetWorthPoint,
  User,
  UserActivityResponse,
  UserPositionsResponse,
  UserProfileResponse,
  UserResponse,
  UserStatsResponse,
} from '../../upstream/account-schemas.ts';
import type { SimUser } from '../catalog.ts';
import { formatFixed, formatTrimmed, NOTIONAL_SCALE, rescale } from '../fixed-point.ts';
import { outcomeValue } from '../holdings.ts';
import type { MarketSimulation } from '../market-simulation.ts';
import { createPrng, deriveSeed } from '../prng.ts';
import { isoTime } from '../snapshots.ts';
import { activityEntryOf, currentValue, holdingsOf, positionOf, statsOf, tradesOf } from '../user-ledger.ts';
import { ok, parseBoolean, parseCount, unknownId } from './http.ts';
import { get, type Route } from './router.ts';

/** Upstream limit: `days` default 30, max 365. */
export const NET_WORTH_DAYS = { default: 30, max: 365 };
/** Not shown upstream: the profile bundle carries this many recent activities. */
export const PROFILE_ACTIVITIES = 20;
const DAY_MS = 86_400_000;

function userOf(user: SimUser): User {
  return {
    user_id: user.userId,
    username: user.username,
    wallet_address: user.walletAddress,
    created_at: isoTime(user.createdAt),
  };
}

/** Usernames compare case-insensitively. */
function findUser(sim: MarketSimulation, username: string): SimUser {
  const wanted = username.toLowerCase();
  const user = sim.users.find((candidate) => candidate.username === wanted);
  if (!user) throw unknownId(`user ${username} not found`);
  return user;
}

const cents = (notional: bigint): bigint => rescale(notional, NOTIONAL_SCALE, 2);
const money = (valueInCents: bigint): string => formatFixed(valueInCents, 2);
const percentChange = (from: bigint, to: bigint): string =>
  money(from === 0n ? 0n : ((to - from) * 10_000n) / from);

/**
 * Daily points ending now. Today's total is the exact value of the open positions; earlier days
 * walk back from it by a seeded +-3% a day, the same walk whatever `days` is asked.
 */
function netWorthOf(sim: MarketSimulation, user: SimUser, days: number): NetWorthHistoryResponse {
  const open = holdingsOf(sim, user, false);
  const closed = holdingsOf(sim, user, true).filter((holding) => holding.market.status === 'RESOLVED');
  const costBasis = cents(open.reduce((sum, h) => sum + BigInt(h.quantity) * BigInt(h.avgPrice), 0n));
  const realized = cents(
    closed.reduce(
      (sum, h) => sum + BigInt(h.quantity) * BigInt(outcomeValue(h.outcome, h.market.lastPrice) - h.avgPrice),
      0n,
    ),
  );
  const rng = createPrng(deriveSeed(sim.seed, 'net-worth', user.index));
  const values: bigint[] = [cents(open.reduce((sum, h) => sum + currentValue(h), 0n))];
  while (values.length < days) {
    const later = values[values.length - 1]!;
    values.push((later * BigInt(10_000 + rng.int(-300, 300))) / 10_000n);
  }
  values.reverse();
  const now = sim.now();
  const start = values[0]!;
  const data: NetWorthPoint[] = values.map((value, index) => ({
    timestamp: isoTime(now - (values.length - 1 - index) * DAY_MS),
    total_value: money(value),
    unrealized_pnl: money(value - costBasis),
    realized_pnl: money(realized),
    change_percentage: percentChange(start, value),
    position_count: open.length,
  }));
  const current = values[values.length - 1]!;
  const ascending = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const lowest = ascending[0]!;
  const highest = ascending[ascending.length - 1]!;
  return {
    success: true,
    data,
    summary: {
      current_value: money(current),
      start_value: money(start),
      change_value: money(current - start),
      change_percentage: percentChange(start, current),
      highest_value: money(highest),
      lowest_value: money(lowest),
    },
  };
}

export function userRoutes(sim: MarketSimulation): Route[] {
  return [
    get('/api/users/:username', (_request, params) => {
      const body: UserResponse = { success: true, user: userOf(findUser(sim, params.username!)) };
      return ok(body);
    }),
    get('/api/users/:username/profile', (request, params) => {
      const user = findUser(sim, params.username!);
      const includeClosed = parseBoolean(request.query, 'include_closed');
      const stats = statsOf(sim, user);
      const body: UserProfileResponse = {
        success: true,
        user: userOf(user),
        stats: { markets_traded: stats.markets_traded, win_rate: stats.win_rate },
        positions: holdingsOf(sim, user, includeClosed).map(positionOf),
        activities: tradesOf(sim, user).slice(0, PROFILE_ACTIVITIES).map(activityEntryOf),
      };
      return ok(body);
    }),
    get('/api/users/:username/stats', (_request, params) => {
      const body: UserStatsResponse = {
        success: true,
        stats: statsOf(sim, findUser(sim, params.username!)),
      };
      return ok(body);
    }),
    get('/api/users/:username/positions', (request, params) => {
      const user = findUser(sim, params.username!);
      const holdings = holdingsOf(sim, user, parseBoolean(request.query, 'include_closed'));
      const total = holdings.reduce((sum, holding) => sum + currentValue(holding), 0n);
      const body: UserPositionsResponse = {
        success: true,
        total_value_usd: formatTrimmed(total, NOTIONAL_SCALE),
        positions: holdings.map(positionOf),
      };
      return ok(body);
    }),
    get('/api/users/:username/activity', (_request, params) => {
      const user = findUser(sim, params.username!);
      const body: UserActivityResponse = {
        success: true,
        activities: tradesOf(sim, user).map(activityEntryOf),
      };
      return ok(body);
    }),
    get('/api/users/:username/net-worth-history', (request, params) => {
      const user = findUser(sim, params.username!);
      return ok(netWorthOf(sim, user, parseCount(request.query, 'days', NET_WORTH_DAYS)));
    }),
  ];
}
