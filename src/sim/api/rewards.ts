/**
 * @module sim/api/rewards
 * Reward-program metadata (docs/upstream.md "Rewards"): the program parameters, a
 * leaderboard computed from the users' trades in the asked date range, and weekly epochs.
 */
import type {
  EpochsResponse,
  LeaderboardResponse,
  RewardsProgramResponse,
} from '../../upstream/account-schemas.ts';
import { formatFixed, NOTIONAL_SCALE, rescale } from '../fixed-point.ts';
import type { MarketSimulation } from '../market-simulation.ts';
import { tradedNotional, tradesOf } from '../user-ledger.ts';
import { badRequest, ok, parseEnum, parseLimit } from './http.ts';
import { get, type Route } from './router.ts';

export const PROGRAM = {
  maker_rebate_share_bps: 2_500,
  fee_equivalent_k: 0.5,
  creator_share_of_taker_fee_bps: 1_000,
};
/** Upstream defaults; the caps are the simulator's (docs/upstream.md). */
export const LEADERBOARD_LIMIT = { default: 25, max: 100 };
export const EPOCHS_LIMIT = { default: 30, max: 100 };
/** Weekly epochs the simulator knows, newest first. */
const EPOCH_COUNT = 52;
const DAY_MS = 86_400_000;
const epochStatuses = ['OPEN', 'FINALIZED', 'PAID'] as const;

/** `from`/`to`: a date (YYYY-MM-DD) or an ISO 8601 time; `to` as a bare date means the whole day. */
function parseDate(raw: string | undefined, name: string, endOfDay: boolean): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const bareDate = /^\d{4}-\d{2}-\d{2}$/.test(raw);
  const ms = Date.parse(bareDate ? `${raw}T00:00:00.000Z` : raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(ms))
    throw badRequest(`${name} must be a date (YYYY-MM-DD)`);
  return bareDate && endOfDay ? ms + DAY_MS - 1 : ms;
}

export function rewardRoutes(sim: MarketSimulation): Route[] {
  return [
    get('/api/rewards/program', () => {
      const body: RewardsProgramResponse = { success: true, program: { ...PROGRAM } };
      return ok(body);
    }),
    get('/api/rewards/leaderboard', (request) => {
      const limit = parseLimit(request.query, LEADERBOARD_LIMIT);
      const from = parseDate(request.query.from, 'from', false) ?? Number.NEGATIVE_INFINITY;
      const to = parseDate(request.query.to, 'to', true) ?? Number.POSITIVE_INFINITY;
      if (from > to) throw badRequest('from must not be after to');
      // fee equivalent = traded notional * k (k = 0.5); rebate = its maker share (25%), in cents.
      const ranked = sim.users
        .map((user) => {
          const trades = tradesOf(sim, user).filter((trade) => trade.at >= from && trade.at <= to);
          const feeEquivalent = rescale(tradedNotional(trades), NOTIONAL_SCALE, 2) / 2n;
          const rebate = (feeEquivalent * BigInt(PROGRAM.maker_rebate_share_bps)) / 10_000n;
          return { user, feeEquivalent, rebate };
        })
        .filter((entry) => entry.feeEquivalent > 0n)
        .sort((a, b) =>
          a.feeEquivalent === b.feeEquivalent
            ? a.user.index - b.user.index
            : a.feeEquivalent > b.feeEquivalent
              ? -1
              : 1,
        )
        .slice(0, limit);
      const body: LeaderboardResponse = {
        success: true,
        leaderboard: ranked.map(({ user, feeEquivalent, rebate }) => ({
          user_id: user.userId,
          username: user.username,
          fee_equivalent: formatFixed(feeEquivalent, 2),
          estimated_rebate_stablecoin: formatFixed(rebate, 2),
        })),
      };
      return ok(body);
    }),
    get('/api/rewards/epochs', (request) => {
      const limit = parseLimit(request.query, EPOCHS_LIMIT);
      const status = request.query.status
        ? parseEnum(request.query, 'status', epochStatuses, 'OPEN')
        : undefined;
      // Weekly epochs starting on Mondays (UTC): this week's is OPEN, last week's FINALIZED, older PAID.
      const today = Math.floor(sim.now() / DAY_MS) * DAY_MS;
      const monday = today - ((new Date(today).getUTCDay() + 6) % 7) * DAY_MS;
      const epochs = Array.from({ length: EPOCH_COUNT }, (_, age): EpochsResponse['epochs'][number] => {
        const label = new Date(monday - age * 7 * DAY_MS).toISOString().slice(0, 10);
        const epochStatus = age === 0 ? 'OPEN' : age === 1 ? 'FINALIZED' : 'PAID';
        return {
          epoch_id: `epoch-${label}`,
          epoch_label: label,
          status: epochStatus,
          reward_type: 'MAKER_REBATE',
        };
      });
      const body: EpochsResponse = {
        success: true,
        epochs: epochs.filter((epoch) => status === undefined || epoch.status === status).slice(0, limit),
      };
      return ok(body);
    }),
  ];
}
