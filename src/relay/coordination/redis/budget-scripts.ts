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
/** The format each relay in the spending table writes (relay/coordination/redis/formats.ts). */
export const SPENDING_FORMAT_KEY = `${PREFIX}spending-format`;

/**
 * Leases up to ARGV[3] tokens from the bucket (rate ARGV[1] per second, capacity ARGV[2]), written
 * in format ARGV[4]; ARGV[5]: the formats read, comma-separated. Returns {granted, waitMs}: waitMs
 * is how long until one token exists when none was granted; {-1, 0, its format} untouched when the
 * bucket is of a format not read (none given: format 1).
 */
export const LEASE_TOKENS = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local rate, capacity, want = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at', 'format')
if state[1] and not string.find(',' .. ARGV[5] .. ',', ',' .. (state[3] or '1') .. ',', 1, true) then
  return {-1, 0, state[3]}
end
local tokens = tonumber(state[1]) or capacity
local at = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - at) * rate / 1000)
local granted = math.min(want, math.floor(tokens))
tokens = tokens - granted
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now), 'format', ARGV[4])
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity * 1000 / rate) + 1000)
local waitMs = 0
if granted == 0 then waitMs = math.ceil((1 - tokens) * 1000 / rate) end
return {granted, waitMs}`;

/**
 * Records that relay ARGV[1] spent ARGV[2] requests per second, in format ARGV[4] (KEYS[2], beside
 * the table: relays of an older version read the table only), forgets relays silent for ARGV[3]
 * ms, and returns {live relays, their total rate as a string, relays of a format not read}: those
 * (ARGV[5]: the formats read, comma-separated; none given: format 1) are left alone, uncounted.
 */
export const REPORT_SPENDING = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ' ' .. now)
redis.call('HSET', KEYS[2], ARGV[1], ARGV[4])
local readable = ',' .. ARGV[5] .. ','
local entries = redis.call('HGETALL', KEYS[1])
local relays, total, unread = 0, 0, 0
for i = 1, #entries, 2 do
  local format = redis.call('HGET', KEYS[2], entries[i]) or '1'
  local rate, seen = string.match(entries[i + 1], '^(%S+) (%d+)$')
  if not string.find(readable, ',' .. format .. ',', 1, true) then
    unread = unread + 1
  elseif rate == nil or tonumber(seen) < now - tonumber(ARGV[3]) then
    redis.call('HDEL', KEYS[1], entries[i])
    redis.call('HDEL', KEYS[2], entries[i])
  else
    relays = relays + 1
    total = total + tonumber(rate)
  end
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 2)
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[3]) * 2)
return {relays, tostring(total), unread}`;

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
