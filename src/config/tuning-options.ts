/**
 * @module config/tuning-options
 * The option (with its environment twin) that sets each of the relay's limits and timings
 * (config/tuning.ts) from the command line: its flag, range, help and the meaning
 * docs/operations.md's table gives; its default is the tuning's own.
 */
import { integerOption, type OptionSpec } from './option-spec.ts';
import { defaultTuning, type TuningKey, tuningValue } from './tuning.ts';

export interface TuningOption {
  key: TuningKey;
  spec: OptionSpec;
}

const DAY_MS = 86_400_000;
const GIB = 1024 ** 3;

function option(
  key: TuningKey,
  env: string,
  help: string,
  range: { min: number; max?: number; placeholder?: string; doc?: string },
): TuningOption {
  return {
    key,
    spec: integerOption({ env, help, default: String(tuningValue(defaultTuning, key)), ...range }),
  };
}

/**
 * The flood, close, edge and status-feed limits, one row each: flag, tuning key, help, min, max,
 * placeholder and the meaning docs/operations.md's table gives; the environment twin is the flag in
 * upper case.
 */
// biome-ignore format: a table, one option per line
const limitRows: [string, TuningKey, string, number, number, string?, string?][] = [
  ['confirm-ms', 'confirmMs', 'a stream upstream confirmed unchanged sends its subscribers a `confirmed` message this often; 0 never', 0, DAY_MS, 'MS', 'a stream upstream confirmed unchanged sends its subscribers one `confirmed` message this often (docs/protocol.md "`confirmed`"); 0 never'],
  ['coalesce-ms', 'coalesceMs', '0 writes each stream frame at once; otherwise the frames ready for one connection leave in one write at the end of the event-loop turn, or this long after its last write while it is busy', 0, 100, 'MS', 'write coalescing: `0` writes each stream message at once; otherwise the messages ready for one connection leave in one socket write at the end of the event-loop turn, and a connection that wrote less than this long ago waits until this long after that write ("Write coalescing" below)'],
  ['flood-close-after-ms', 'connection.floodCloseAfterMs', 'a connection over its request rate this long is closed with 4429', 1_000, DAY_MS, 'MS', 'a connection over its request rate this long is closed with 4429'],
  ['close-grace-ms', 'connection.closeGraceMs', 'after a close for a limit, the client has this long to read up to the close frame', 0, 60_000, 'MS', 'after a close for a limit (4029, 4429, a bad frame), the client has this long to read up to the close frame; then the socket is dropped'],
  ['slow-consumer-linger-ms', 'connection.slowConsumerLingerMs', 'after a 4008 close, a client that stopped reading has this long to read up to the close frame', 0, 60_000, 'MS', 'after a 4008 close, a client that stopped reading has this long to read up to the close frame (the socket stays half-closed, holding at most the one write the kernel was taking); then it is dropped'],
  ['max-connections-per-address', 'edge.maxConnectionsPerAddress', 'WebSocket and SSE connections per client address; more are closed with 4029 (SSE: HTTP 429)', 1, 10_000_000, undefined, 'connections open per client address, WebSocket and SSE together; one more WebSocket is closed with 4029 right after the upgrade, one more SSE request is answered HTTP 429'],
  ['connection-rate-per-address', 'edge.connectionsPerSecondPerAddress', 'new WebSocket and SSE connections per second per client address; more get HTTP 429', 1, 1_000_000, undefined, 'new connections (WebSocket upgrades and SSE requests together) per second per client address; beyond it HTTP 429 (`Retry-After: 1`) before the upgrade or any event'],
  ['connection-burst-per-address', 'edge.connectionBurstPerAddress', 'burst allowance above --connection-rate-per-address', 1, 1_000_000, undefined, 'burst allowance above `--connection-rate-per-address`'],
  ['max-connections-per-key', 'edge.maxConnectionsPerKey', 'WebSocket and SSE connections per API key; more are closed with 4029 (SSE: HTTP 429)', 1, 10_000_000, undefined, 'connections per API key (with `--api-keys`), WebSocket and SSE together, whatever their address; one more is closed with 4029 (SSE: HTTP 429)'],
  ['max-pending-connections', 'edge.maxPendingConnections', 'TCP connections still sending their first request (an upgrade in progress), in all', 1, 10_000_000, undefined, 'TCP connections, on any path, that have not finished their first request (an upgrade in progress); when full, the one that has sent the least (the oldest idle one) is answered 503 and closed to let the newcomer in'],
  ['max-pending-per-address', 'edge.maxPendingPerAddress', 'the same per TCP peer (not applied behind trusted proxies)', 1, 10_000_000, undefined, 'the same per TCP peer (IPv6: per prefix); one more is let in but its request is answered 429 with `Retry-After: 1`; not applied with `--trusted-proxy-depth` above 0 (every peer is then the proxy)'],
  ['headers-timeout-ms', 'edge.headersTimeoutMs', 'a connection must send its first request (or upgrade) within this long', 100, 600_000, 'MS', 'a connection that has not sent its first request\'s headers (or upgrade) by then is answered 408 and closed; from half full, the pending set gives each connection less (a tenth when full); also Node\'s `headersTimeout` for every request'],
  ['ipv6-prefix-length', 'edge.ipv6PrefixLength', 'IPv6 clients count per prefix of this many bits for every per-address limit (128: per address)', 16, 128, 'BITS', 'an IPv6 client counts as its first this-many bits for every per-address limit and the wrong-key throttle (one subscriber gets a whole /64); 128 counts each address'],
  ['auth-free-failures', 'edge.authFreeFailures', 'wrong API keys per address answered at once; each further one is answered later (operator keys alike, counted apart)', 1, 1_000_000, undefined, 'wrong API keys per address answered 401 at once; each further one is answered 100 ms later than the last (at most 2 s); the three `--auth-*` options apply to wrong operator keys too, counted apart ([Operator endpoints](#operator-endpoints))'],
  ['auth-lockout-failures', 'edge.authLockoutFailures', 'wrong API keys per address that lock it out (HTTP 429) for --auth-lockout-ms', 1, 1_000_000, undefined, 'wrong API keys per address that lock it out: every attempt from it is answered 429 (`Retry-After`) without its key being looked at, for `--auth-lockout-ms`'],
  ['auth-lockout-ms', 'edge.authLockoutMs', 'how long a lockout lasts; failures are forgiven at --auth-free-failures per this long', 1_000, DAY_MS, 'MS', 'how long a lockout lasts; failures are forgiven at `--auth-free-failures` per this long after it'],
  ['trusted-proxy-depth', 'edge.trustedProxyDepth', 'proxies in front that append to X-Forwarded-For (0: the TCP peer is the client)', 0, 10, undefined, 'proxies in front of the relay that append the address they saw to `X-Forwarded-For`'],
  ['max-status-viewers', 'statusFeed.maxViewers', 'status feed viewers at once; more get 503', 1, 10_000, undefined, '`GET /status/events` feeds open at once; one more is answered 503 `too_many_viewers` (with `Retry-After`)'],
  ['status-viewer-buffer-bytes', 'statusFeed.viewerBufferBytes', 'unsent bytes a status feed viewer may queue before it is dropped', 1024, GIB, 'BYTES', 'unsent bytes a feed viewer may have queued; past it the viewer is dropped (connection closed)'],
  ['rest-cache-ms', 'restCacheTtlMs', 'REST front: an upstream answer is served again for this long (0: coalescing only)', 0, DAY_MS, 'MS', '[REST front](#rest-front): an upstream answer is served again for this long (0: coalescing only)'],
  ['rest-cache-entries', 'restCacheCapacity', 'REST front: upstream answers kept at most', 1, 1_000_000, undefined, '[REST front](#rest-front): upstream answers kept at most'],
  ['rest-budget-percent', 'restBudgetPercent', 'REST front: share of the polling budget its upstream requests may take ahead of polls (beyond: what polls leave)', 0, 100, 'PERCENT', '[REST front](#rest-front): the share of the polling budget its upstream requests may take ahead of the polls; beyond it they get only what the polls leave'],
  ['rest-queue', 'restQueue', 'REST front: upstream requests waiting for the budget at most; more get 503', 0, 1_000_000, undefined, '[REST front](#rest-front): upstream requests waiting for a slot of the budget at most; one more is answered 503 `upstream_busy` at once'],
  ['drain-ms', 'drainMs', 'on SIGTERM or POST /drain, connections are told to go and closed with 1001 spread over this long', 0, 600_000, 'MS', 'on SIGTERM (or `POST /drain`) every connection gets a `going_away` with a delay of its own and is closed with 1001 at that time, the closes spread evenly over this long; then the relay releases its leases and exits 0 (0: every connection at once)'],
];

/** Flag name -> the tuning value it sets; each flag's environment twin is the upper-case name. */
export const tuningOptions: Record<string, TuningOption> = {
  'heartbeat-ms': option(
    'heartbeatMs',
    'HEARTBEAT_MS',
    'ping and heartbeat interval; a client missing two pings is dropped',
    {
      doc: 'ping and `heartbeat` message interval; a client that misses two pings is closed with 4008 (it is not reading)',
      min: 100,
      max: DAY_MS,
      placeholder: 'MS',
    },
  ),
  'linger-ms': option(
    'lingerMs',
    'LINGER_MS',
    'a stream is still polled this long after its last subscriber left',
    {
      doc: 'a stream is still polled this long after its last subscriber left, so a reconnect finds it (and can resume)',
      min: 0,
      max: DAY_MS,
      placeholder: 'MS',
    },
  ),
  'resume-buffer': option('resumeBufferSize', 'RESUME_BUFFER', 'updates kept per stream for resume', {
    doc: "updates kept per stream for `resume` (in cluster mode, in Redis too: the history's length)",
    min: 1,
    max: 1_000_000,
  }),
  'resume-buffer-bytes': option(
    'resumeBufferBytes',
    'RESUME_BUFFER_BYTES',
    'bytes of updates kept per stream for resume',
    {
      doc: "bytes of updates a stream keeps for `resume` at most, its oldest dropped first (this relay's rings; a `rest` stream of large bodies reaches it long before `--resume-buffer`)",
      min: 1024,
      max: GIB,
      placeholder: 'BYTES',
    },
  ),
  'history-ms': option(
    'historyMs',
    'HISTORY_MS',
    'how long an update is kept for resume (in cluster mode, in Redis, for any relay)',
    {
      doc: "how long an update is kept for `resume`, in each stream's ring and, in cluster mode, in Redis so a client resumes on any relay (docs/cluster.md)",
      min: 1_000,
      max: DAY_MS,
      placeholder: 'MS',
    },
  ),
  'lease-ms': option(
    'leaseMs',
    'LEASE_MS',
    "cluster mode: shortest poll lease; a dead holder's markets move after it",
    {
      doc: 'cluster mode: the shortest poll lease (3 poll intervals when longer); the markets of a relay that died move after it',
      min: 100,
      max: 600_000,
      placeholder: 'MS',
    },
  ),
  'rebalance-ms': option(
    'rebalanceMs',
    'REBALANCE_MS',
    'cluster mode: how often each relay announces itself; leases move to the relay they belong to',
    {
      doc: 'cluster mode: how often each relay announces itself in Redis; leases move to the relay they belong to ([cluster.md](cluster.md#how-leases-move)); a relay silent for 3 of these is gone',
      min: 50,
      max: 600_000,
      placeholder: 'MS',
    },
  ),
  'stale-after-polls': option(
    'staleAfterFactor',
    'STALE_AFTER_POLLS',
    'a stream turns stale after this many poll intervals without a successful poll',
    {
      doc: 'a stream turns `stale` after this many poll intervals without a successful poll (never later than the maximum age plus this many minimum intervals)',
      min: 1,
      max: 1_000,
    },
  ),
  'max-connections': option(
    'maxConnections',
    'MAX_CONNECTIONS',
    'WebSocket and SSE connections together at most; more are refused (4029 / 503)',
    {
      doc: 'WebSocket and SSE connections together at most; more WebSockets are closed with 4029, more SSE requests answered 503',
      min: 1,
      max: 10_000_000,
    },
  ),
  'max-frame-bytes': option(
    'maxFrameBytes',
    'MAX_FRAME_BYTES',
    'largest client frame; bigger closes with 1009',
    {
      doc: 'largest client frame; a bigger one closes the connection with 1009',
      min: 256,
      max: 64 * 1024 * 1024,
      placeholder: 'BYTES',
    },
  ),
  'upstream-timeout-ms': option('upstreamTimeoutMs', 'UPSTREAM_TIMEOUT_MS', 'upstream request timeout', {
    doc: 'upstream request timeout',
    min: 10,
    max: 600_000,
    placeholder: 'MS',
  }),
  'upstream-retries': option(
    'upstreamRetries',
    'UPSTREAM_RETRIES',
    'retries of a failed upstream request that is not a poll (a poll is retried by the next poll)',
    {
      doc: "retries of a failed upstream request that is not a poll (a poll's retry is its next poll, [scheduler.md](scheduler.md#rate-limits))",
      min: 0,
      max: 10,
    },
  ),
  'upstream-down-after-ms': option(
    'upstreamDownAfterMs',
    'UPSTREAM_DOWN_AFTER_MS',
    '/health answers 503 after this long without any upstream success',
    {
      doc: '`/health` answers 503 after this long without any upstream success',
      min: 100,
      max: DAY_MS,
      placeholder: 'MS',
    },
  ),
  'max-streams-per-connection': option(
    'connection.maxStreams',
    'MAX_STREAMS_PER_CONNECTION',
    'streams one connection may hold',
    { doc: 'streams one connection may hold (`limit_exceeded` beyond)', min: 1, max: 1_000_000 },
  ),
  'client-rps': option(
    'connection.requestsPerSecond',
    'CLIENT_RPS',
    'client requests per second per connection',
    { doc: 'client requests per second per connection (`rate_limited` beyond)', min: 1, max: 100_000 },
  ),
  'client-burst': option('connection.requestBurst', 'CLIENT_BURST', 'burst allowance above --client-rps', {
    doc: 'burst allowance above `--client-rps`',
    min: 1,
    max: 1_000_000,
  }),
  'send-high-water-bytes': option(
    'connection.highWaterBytes',
    'SEND_HIGH_WATER_BYTES',
    'send buffer above which updates are held back (conflated)',
    {
      doc: 'send buffer above which updates are held back (conflated) (below `--send-max-buffer-bytes`)',
      min: 1024,
      max: GIB,
      placeholder: 'BYTES',
    },
  ),
  'send-max-buffer-bytes': option(
    'connection.maxBufferBytes',
    'SEND_MAX_BUFFER_BYTES',
    'send buffer that closes the connection with 4008 at once',
    {
      doc: 'send buffer that closes the connection with 4008 at once',
      min: 1024,
      max: 4 * GIB,
      placeholder: 'BYTES',
    },
  ),
  'slow-consumer-timeout-ms': option(
    'connection.slowConsumerTimeoutMs',
    'SLOW_CONSUMER_TIMEOUT_MS',
    'closed with 4008 after this long above the high-water mark',
    {
      doc: 'a connection above the high-water mark this long is closed with 4008',
      min: 100,
      max: DAY_MS,
      placeholder: 'MS',
    },
  ),
  ...Object.fromEntries(
    limitRows.map(([flag, key, help, min, max, placeholder, doc]) => [
      flag,
      option(key, flag.toUpperCase().replaceAll('-', '_'), help, {
        min,
        max,
        ...(placeholder === undefined ? {} : { placeholder }),
        ...(doc === undefined ? {} : { doc }),
      }),
    ]),
  ),
  'sim-tick-ms': option('simTickMs', 'SIM_TICK_MS', 'simulated markets change this often (0: never)', {
    doc: 'simulated markets change this often; 0 = never (`sim`, and `serve --upstream sim`)',
    min: 0,
    max: DAY_MS,
    placeholder: 'MS',
  }),
};
