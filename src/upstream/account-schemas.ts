/**
 * @module upstream/account-schemas
 * The zod schemas of upstream's per-user resources (a user, their stats, positions, activity and
 * net worth) and of the rewards program (its terms, leaderboard and epochs), with the types derived
 * from them (docs/upstream.md). Apart from upstream/schemas.ts, whose scalars and envelope they
 * use, because they are about accounts rather than markets: no market stream is made of them,
 * only `rest` paths and the simulator's ledger.
 */
import { z } from 'zod';
import { decimal2, decimalString, isoTimestamp, ok, uuid } from './schemas.ts';

// Users

export const user = z.object({
  user_id: z.string(),
  username: z.string(),
  wallet_address: z.string(),
  created_at: isoTimestamp,
});
export const userStats = z.object({
  total_volume_usd: decimalString,
  markets_traded: z.number().int(),
  positions_count: z.number().int(),
  win_rate: decimal2,
});
export const position = z.object({
  market_id: uuid,
  market_title: z.string(),
  outcome: z.enum(['YES', 'NO']),
  quantity: decimalString,
  avg_price: decimalString,
  current_value: decimalString,
});
export const userActivityEntry = z.object({
  activity_id: z.string(),
  activity_type: z.string(),
  market_id: uuid,
  market_title: z.string(),
  side: z.string(),
  price: decimalString,
  size: decimalString,
  activity_timestamp: isoTimestamp,
});
export const netWorthPoint = z.object({
  timestamp: isoTimestamp,
  total_value: decimalString,
  unrealized_pnl: decimalString,
  realized_pnl: decimalString,
  change_percentage: decimalString,
  position_count: z.number().int(),
});
export const netWorthSummary = z.object({
  current_value: decimalString,
  start_value: decimalString,
  change_value: decimalString,
  change_percentage: decimalString,
  highest_value: decimalString,
  lowest_value: decimalString,
});

export const userResponse = z.object({ ...ok, user });
/** Entries of the bundle's positions and activities arrays: fields not shown upstream, so unchecked. */
export const userProfileResponse = z.object({
  ...ok,
  user,
  stats: userStats.pick({ markets_traded: true, win_rate: true }),
  positions: z.array(z.unknown()),
  activities: z.array(z.unknown()),
});
export const userStatsResponse = z.object({ ...ok, stats: userStats });
export const userPositionsResponse = z.object({
  ...ok,
  total_value_usd: decimalString,
  positions: z.array(position),
});
export const userActivityResponse = z.object({ ...ok, activities: z.array(userActivityEntry) });
export const netWorthHistoryResponse = z.object({
  ...ok,
  data: z.array(netWorthPoint),
  summary: netWorthSummary,
});

// Rewards

export const rewardsProgram = z.object({
  maker_rebate_share_bps: z.number().int(),
  fee_equivalent_k: z.number(),
  creator_share_of_taker_fee_bps: z.number().int(),
});
export const leaderboardEntry = z.object({
  user_id: z.string(),
  username: z.string(),
  fee_equivalent: decimalString,
  estimated_rebate_stablecoin: decimalString,
});
export const epochStatus = z.enum(['OPEN', 'FINALIZED', 'PAID']);
export const rewardEpoch = z.object({
  epoch_id: z.string(),
  epoch_label: z.string(),
  status: epochStatus,
  reward_type: z.string(),
});
export const rewardsProgramResponse = z.object({ ...ok, program: rewardsProgram });
export const leaderboardResponse = z.object({ ...ok, leaderboard: z.array(leaderboardEntry) });
export const epochsResponse = z.object({ ...ok, epochs: z.array(rewardEpoch) });

// Derived types

export type User = z.infer<typeof user>;
export type UserStats = z.infer<typeof userStats>;
export type Position = z.infer<typeof position>;
export type UserActivityEntry = z.infer<typeof userActivityEntry>;
export type NetWorthPoint = z.infer<typeof netWorthPoint>;
export type UserResponse = z.infer<typeof userResponse>;
export type UserProfileResponse = z.infer<typeof userProfileResponse>;
export type UserStatsResponse = z.infer<typeof userStatsResponse>;
export type UserPositionsResponse = z.infer<typeof userPositionsResponse>;
export type UserActivityResponse = z.infer<typeof userActivityResponse>;
export type NetWorthHistoryResponse = z.infer<typeof netWorthHistoryResponse>;
export type RewardsProgramResponse = z.infer<typeof rewardsProgramResponse>;
export type LeaderboardResponse = z.infer<typeof leaderboardResponse>;
export type EpochsResponse = z.infer<typeof epochsResponse>;
