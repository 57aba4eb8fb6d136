/**
 * @module relay/coordination/redis/stream-scripts
 * The Lua scripts of cluster-wide streams (docs/cluster.md "Cluster-wide streams"). Each runs
 * atomically in Redis and touches the keys of one target only (./keys.ts: one hash
 * slot). Every write checks the writer's fencing token against the lease in the same script, so a
 * relay that lost its lease (paused, partitioned, its lease expired and taken) cannot write.
 */

/**
 * Takes the lease when free (a new fencing token from the target's counter), renews it when ours,
 * and moves it to the relay that should hold it (relay/coordination/redis/leases/rendezvous.ts): that relay, finding the
 * lease held by another, leaves its wish (`want`, for one lease TTL); the holder, at its next
 * renewal, gives the lease up instead, and a free lease another relay wants is left to it, so the
 * wanting relay takes it at its next poll and continues the streams from their stored state.
 * A missing counter (first lease, one let go a while ago, or a Redis that lost its data) starts
 * from Redis's clock in microseconds, so tokens keep growing across a restart and a relay still
 * holding an old token never outranks a new one. A relay just back from a Redis outage leaves free leases it did not
 * hold to their holders of before for a while (docs/cluster.md "Redis outages"): they may have
 * numbered the streams on alone meanwhile, and only they can continue them. A lease is
 * `<instance> <token> <format>` and a wish `<instance> <format>` (relay/coordination/redis/formats.ts;
 * format 1 had no format word): every format starts with the relay's name, so a relay tells whose a
 * lease is whatever its format. A follower that reads the holder's shared responses says so
 * (`asked`, `<instance> <format>` for one lease TTL; relay/coordination/redis/share-demand.ts), and
 * the holder's claim returns whether one did. KEYS: lease, fence, want, asked. ARGV: instance, ttl
 * ms, fence ttl ms, '1' when the caller should hold the lease, '1' when it may take a free lease, the
 * format written, '1' when the caller reads shared responses. Returns {the token, or 0: another
 * relay's lease, or left to its holder; 1 when a follower asked for the shared responses, else 0}.
 */
export const CLAIM = `
local lease = redis.call('GET', KEYS[1])
local want = redis.call('GET', KEYS[3])
if want then want = string.match(want, '^(%S+)') end
if lease then
  local holder, token = string.match(lease, '^(%S+) (%d+)')
  if holder ~= ARGV[1] then
    if ARGV[4] == '1' then redis.call('SET', KEYS[3], ARGV[1] .. ' ' .. ARGV[6], 'PX', ARGV[2]) end
    if ARGV[7] == '1' then redis.call('SET', KEYS[4], ARGV[1] .. ' ' .. ARGV[6], 'PX', ARGV[2]) end
    return {0, 0}
  end
  if want and want ~= ARGV[1] and ARGV[4] ~= '1' then
    redis.call('DEL', KEYS[1])
    return {0, 0}
  end
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {tonumber(token), redis.call('EXISTS', KEYS[4])}
end
if want and want ~= ARGV[1] and ARGV[4] ~= '1' then return {0, 0} end
if ARGV[5] ~= '1' then return {0, 0} end
redis.call('DEL', KEYS[3])
if redis.call('EXISTS', KEYS[2]) == 0 then
  local time = redis.call('TIME')
  redis.call('SET', KEYS[2], time[1] .. string.format('%06d', tonumber(time[2])))
end
local token = redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
-- Formatted as an integer: Lua's own number-to-text conversion keeps only 14 digits.
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. string.format('%d', token) .. ' ' .. ARGV[6], 'PX', ARGV[2])
return {token, redis.call('EXISTS', KEYS[4])}`;

/**
 * Says that relay ARGV[1] is alive, holds ARGV[2] leases, spent ARGV[4] µs of CPU per second
 * numbering its polls and asks for weight ARGV[5] in rendezvous hashing; forgets relays silent for
 * ARGV[3] ms, and returns the live relays as a flat list: instance, leases held, poll CPU, weight
 * ('' when it announces none), ... KEYS: the roster, the poll CPU of each, the weight of each, the
 * format of each (hashes of their own, so that relays of an older version, which read only the
 * roster, see nothing new). ARGV[6]: the format written; ARGV[7]: the formats read, comma-separated.
 * Only relays writing the caller's format are listed: leases are spread over relays that read what
 * each other write, so relays of two releases never hand each other leases by rendezvous hashing
 * (docs/cluster.md "Upgrades"). A relay of a format not read (none given: format 1) is left alone
 * and counted, never forgotten: its own release reads it. Returns {the live relays of the caller's
 * format, the relays of a format not read}.
 */
export const ANNOUNCE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ' ' .. now)
redis.call('HSET', KEYS[2], ARGV[1], ARGV[4])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[5])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[6])
local readable = ',' .. ARGV[7] .. ','
local entries = redis.call('HGETALL', KEYS[1])
local live = {}
local unread = 0
for i = 1, #entries, 2 do
  local format = redis.call('HGET', KEYS[4], entries[i]) or '1'
  local held, seen = string.match(entries[i + 1], '^(%d+) (%d+)$')
  if not string.find(readable, ',' .. format .. ',', 1, true) then
    unread = unread + 1
  elseif held == nil or tonumber(seen) < now - tonumber(ARGV[3]) then
    for k = 1, 4 do redis.call('HDEL', KEYS[k], entries[i]) end
  elseif format == ARGV[6] then
    table.insert(live, entries[i])
    table.insert(live, held)
    table.insert(live, redis.call('HGET', KEYS[2], entries[i]) or '0')
    table.insert(live, redis.call('HGET', KEYS[3], entries[i]) or '')
  end
end
for k = 1, 4 do redis.call('PEXPIRE', KEYS[k], tonumber(ARGV[3]) * 2) end
return {live, unread}`;

/** Deletes the lease only when it is still ours (whatever its format). KEYS: lease. ARGV: instance. */
export const RELEASE = `
local lease = redis.call('GET', KEYS[1])
if lease and string.match(lease, '^(%S+) ') == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/**
 * One poll's messages, written only by the lease holder. KEYS: lease, state, then one history per
 * stream entry. ARGV: lease value (`<instance> <token>`), history length, history age ms, state ttl
 * ms, channel, payload to publish, state JSON ('' = unchanged), ts, rts, token, the state's format,
 * the history's format; then per stream: field, `<epoch> <seq>`, kind (update | reset | confirm),
 * message text ('' unless update).
 * The state is written with its format (hash field `format`) and the times of the response that
 * produced it (`ts`, `rts`), each history entry with its own format (entry field `format`). A poll
 * that changed nothing leaves the times alone: a relay that starts serving the target from the
 * stored state sends its snapshot at the stored seq with that seq's times (docs/protocol.md), not
 * with those of a later poll that only confirmed it. An update is appended to the stream's history
 * (capped by length and by age, as Redis trims); a reset (new epoch) empties it. Returns 1, or 0
 * when the lease is not the writer's (fenced).
 */
export const COMMIT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local oldest = math.max(0, now - tonumber(ARGV[3]))
if ARGV[7] ~= '' then redis.call('HSET', KEYS[2], 'state', ARGV[7], 'format', ARGV[11], 'ts', ARGV[8], 'rts', ARGV[9]) end
redis.call('HSET', KEYS[2], 'token', ARGV[10])
for i = 3, #KEYS do
  local a = 13 + (i - 3) * 4
  redis.call('HSET', KEYS[2], ARGV[a], ARGV[a + 1])
  local kind = ARGV[a + 2]
  if kind == 'reset' then
    redis.call('DEL', KEYS[i])
  elseif kind == 'update' then
    local seq = string.match(ARGV[a + 1], ' (%d+)$')
    redis.call('XADD', KEYS[i], 'MAXLEN', '~', ARGV[2], '*', 'seq', seq, 'msg', ARGV[a + 3], 'format', ARGV[12])
    redis.call('XTRIM', KEYS[i], 'MINID', '~', oldest)
    redis.call('PEXPIRE', KEYS[i], ARGV[3])
  end
end
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('SPUBLISH', ARGV[5], ARGV[6])
return 1`;

/**
 * The market is gone upstream: its state and histories go, and followers are told. KEYS: lease,
 * state, histories. ARGV: lease value, channel, payload. Returns 1, or 0 when fenced.
 */
export const CLOSE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
for i = 2, #KEYS do redis.call('DEL', KEYS[i]) end
redis.call('SPUBLISH', ARGV[2], ARGV[3])
return 1`;

/**
 * A target's state and, per stream asked for, its updates after a seq (newest first), read in one
 * atomic step. KEYS: state, then histories. ARGV: per history: field, after seq; then the most
 * entries to read per history. Returns {state hash as a flat list, one XREVRANGE answer per history}.
 */
export const LOAD = `
local result = {redis.call('HGETALL', KEYS[1])}
local most = tonumber(ARGV[#ARGV])
for i = 2, #KEYS do
  local position = redis.call('HGET', KEYS[1], ARGV[(i - 2) * 2 + 1])
  local entries = {}
  if position then
    local seq = tonumber(string.match(position, ' (%d+)$'))
    local count = math.min(most, seq - tonumber(ARGV[(i - 2) * 2 + 2]))
    if count > 0 then entries = redis.call('XREVRANGE', KEYS[i], '+', '-', 'COUNT', count) end
  end
  result[i] = entries
end
return result`;
