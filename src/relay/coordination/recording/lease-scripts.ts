/**
 * @module relay/coordination/recording/lease-scripts
 * The recording leases' Lua scripts (./redis-lease-table.ts), each one atomic step on one key.
 */

/** KEYS[1] the lease; ARGV[1] the holder, ARGV[2] the TTL (ms). 1: held by ARGV[1] now. */
export const HOLD_RECORDING = `
local holder = redis.call('GET', KEYS[1])
if holder == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

/** KEYS[1] the lease; ARGV[1] the holder. */
export const RELEASE_RECORDING = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`;
