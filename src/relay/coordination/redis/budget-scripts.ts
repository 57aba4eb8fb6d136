/**
 * @module relay/coordination/redis/budget-scripts
 * The cluster's upstream budget in Redis: one token bucket for every relay (`--upstream-rps` for
 * the cluster as a whole) and the table of what each relay spent, from which each relay derives
 * its share. Atomic Lua scripts timed by Redis's own clock, so relays on machines whose clocks
 * disagree still share one bucket. Both keys carry the hash tag `{budget}`: one slot in a Redis
 * Cluster.
 */

const PREFIX = 'market-relay:{budget}:';
export const BUCKET_KEY = `${PREFIX}bucket`;
export const SPENDING_KEY = `${PREFIX}spending`;

/**
 * Leases up to ARGV[3] tokens from the bucket (rate ARGV[1] per second, capacity ARGV[2]).
 * Returns {granted, waitMs}: waitMs is how long until one token exists when none was granted.
 */
export const LEASE_TOKENS = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local rate, capacity, want = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or capacity
local at = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - at) * rate / 1000)
local granted = math.min(want, math.floor(tokens))
tokens = tokens - granted
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity * 1000 / rate) + 1000)
local waitMs = 0
if granted == 0 then waitMs = math.ceil((1 - tokens) * 1000 / rate) end
return {granted, waitMs}`;

/**
 * Records that relay ARGV[1] spent ARGV[2] requests per second, forgets relays silent for ARGV[3]
 * ms, and returns {live relays, their total rate as a string}.
 */
export const REPORT_SPENDING = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ' ' .. now)
local entries = redis.call('HGETALL', KEYS[1])
local relays, total = 0, 0
for i = 1, #entries, 2 do
  local rate, seen = string.match(entries[i + 1], '^(%S+) (%d+)$')
  if rate == nil or tonumber(seen) < now - tonumber(ARGV[3]) then
    redis.call('HDEL', KEYS[1], entries[i])
  else
    relays = relays + 1
    total = total + tonumber(rate)
  end
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 2)
return {relays, tostring(total)}`;

/**
 * A relay's share of the cluster budget: what it spends, plus an equal part of what nobody spends.
 * The shares of all live relays add up to 1, so relays that each keep to their last share while
 * Redis is away keep the cluster within its budget.
 */
export function budgetShare(spending: { own: number; total: number; relays: number; rps: number }): number {
  const { own, total, relays, rps } = spending;
  if (total > rps) return Math.min(1, own / total);
  const unspent = (rps - total) / Math.max(1, relays);
  return Math.min(1, Math.max(0, (own + unspent) / rps));
}
