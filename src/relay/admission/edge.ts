/**
 * @module relay/admission/edge
 * Per-address and per-key caps at the edge (docs/operations.md "Edge limits"), as pure counters
 * over an injectable clock; the endpoints apply the verdicts. Two stages:
 *
 * - TCP connections still sending their first request (an upgrade in progress, or any HTTP request):
 *   capped for the whole relay and per TCP peer, so sockets that never finish a request cannot pile
 *   up, and shed least-sent first when the relay-wide set is full (relay/admission/pending-set.ts). Per peer
 *   only without trusted proxies: behind a proxy every peer is the proxy.
 * - Stream connections, WebSocket and SSE alike, in the same counters (so an address cannot get
 *   past a cap by mixing transports): a connection rate (token bucket) per client address, and
 *   open connections per client address and per API key; wrong API keys per address
 *   (relay/admission/auth-throttle.ts).
 * - Wrong operator keys per address, with the API keys' limits in a throttle of their own: a
 *   lockout from guessing one kind of key does not refuse the other.
 *
 * Every per-address count is kept per address group: an IPv6 address counts as its /64 (or
 * `--ipv6-prefix-length`), relay/admission/client-address.ts `addressGroup`.
 */
import type { IncomingMessage } from 'node:http';
import { TokenBucket } from '../../upstream/rate-gate.ts';
import { presentedKey } from './access.ts';
import { AuthThrottle, type AuthThrottleLimits } from './auth-throttle.ts';
import { addressGroup, clientAddress } from './client-address.ts';
import { type PendingEntry, PendingSet, type PendingVerdict } from './pending-set.ts';

export interface EdgeLimits {
  /** Open stream connections (WebSocket and SSE) per client address. */
  maxConnectionsPerAddress: number;
  /** New stream connections per second per client address, and the burst allowed. */
  connectionsPerSecondPerAddress: number;
  connectionBurstPerAddress: number;
  /** Open stream connections per API key (when the relay has keys). */
  maxConnectionsPerKey: number;
  /** TCP connections that have not finished their first request, whole relay and per TCP peer. */
  maxPendingConnections: number;
  maxPendingPerAddress: number;
  /** How long a connection may take to send its first request's headers (or an upgrade). */
  headersTimeoutMs: number;
  /** Proxies in front of the relay that append to X-Forwarded-For (0: use the TCP peer). */
  trustedProxyDepth: number;
  /** IPv6 addresses count per prefix of this many bits for every per-address limit (128: per address). */
  ipv6PrefixLength: number;
  /** Wrong API keys per address group: answered at once, then slower, then locked out (relay/admission/auth-throttle.ts). */
  authFreeFailures: number;
  authLockoutFailures: number;
  authLockoutMs: number;
}

/** Address groups each key throttle remembers at most (the ones that failed longest ago are forgotten). */
const AUTH_TRACKED_GROUPS = 10_000;

export type EdgeVerdict = 'ok' | 'rate' | 'address' | 'key';

/** Who is connecting: the client address and, when the relay requires keys, the key presented. */
export interface EdgeClient {
  address: string;
  key: string | undefined;
}

/** The client of a WebSocket upgrade or an SSE request (`url` is the request's, parsed). */
export function edgeClient(
  request: IncomingMessage,
  url: URL,
  options: { apiKeys?: readonly string[] | undefined; trustedProxyDepth: number },
): EdgeClient {
  return {
    address: clientAddress(
      request.socket.remoteAddress,
      request.headers['x-forwarded-for'],
      options.trustedProxyDepth,
    ),
    // The key groups connections for the per-key caps and the isolation limits.
    key: options.apiKeys === undefined ? undefined : presentedKey(request.headers, url),
  };
}

/** The fixed words a refusal for a connection cap gives (never the address). */
export function capReason(verdict: 'address' | 'key'): string {
  return verdict === 'address'
    ? 'too many connections from this address'
    : 'too many connections for this API key';
}

export class EdgeAdmission {
  readonly #limits: EdgeLimits;
  readonly #now: () => number;
  readonly #pending: PendingSet;
  readonly auth: AuthThrottle;
  /** Wrong `--operator-key`s (http/operator-access.ts). */
  readonly operatorAuth: AuthThrottle;
  readonly #openByAddress = new Map<string, number>();
  readonly #openByKey = new Map<string, number>();
  readonly #rates = new Map<string, TokenBucket>();

  constructor(limits: EdgeLimits, now: () => number = () => performance.now()) {
    this.#limits = limits;
    this.#now = now;
    this.#pending = new PendingSet(
      {
        maxPending: limits.maxPendingConnections,
        maxPendingPerGroup: limits.maxPendingPerAddress,
        perGroup: limits.trustedProxyDepth === 0,
        headersTimeoutMs: limits.headersTimeoutMs,
      },
      now,
    );
    this.auth = new AuthThrottle(authLimits(limits), now);
    this.operatorAuth = new AuthThrottle(authLimits(limits), now);
  }

  get pending(): number {
    return this.#pending.size;
  }

  /** The relay-wide cap of pending connections. */
  get pendingCapacity(): number {
    return this.#limits.maxPendingConnections;
  }

  /** The group `address` is limited as (an IPv6 address: its prefix). */
  group(address: string): string {
    return addressGroup(address, this.#limits.ipv6PrefixLength);
  }

  /** How long a pending connection may take to send its first request, now (shorter as the set fills). */
  pendingDeadlineMs(): number {
    return this.#pending.deadlineMs();
  }

  /** A TCP connection arrived (`entry.group` from `group()`): admitted, perhaps shedding others. */
  openPending(entry: PendingEntry): PendingVerdict {
    return this.#pending.open(entry);
  }

  /** Its first request arrived, or it closed first (idempotent). */
  settlePending(entry: PendingEntry): void {
    this.#pending.settle(entry);
  }

  /** A new connection from `address` (with API key `key`, if any): whether it may open. */
  admitConnection(client: string, key: string | undefined): EdgeVerdict {
    const address = this.group(client);
    let rate = this.#rates.get(address);
    if (rate === undefined) {
      rate = new TokenBucket({
        ratePerSecond: this.#limits.connectionsPerSecondPerAddress,
        capacity: this.#limits.connectionBurstPerAddress,
        now: this.#now,
      });
      this.#rates.set(address, rate);
    }
    if (rate.tokens < 1) return 'rate';
    rate.reserve();
    if ((this.#openByAddress.get(address) ?? 0) >= this.#limits.maxConnectionsPerAddress) return 'address';
    if (key !== undefined && (this.#openByKey.get(key) ?? 0) >= this.#limits.maxConnectionsPerKey)
      return 'key';
    return 'ok';
  }

  opened(address: string, key: string | undefined): void {
    increment(this.#openByAddress, this.group(address));
    if (key !== undefined) increment(this.#openByKey, key);
  }

  closed(address: string, key: string | undefined): void {
    decrement(this.#openByAddress, this.group(address));
    if (key !== undefined) decrement(this.#openByKey, key);
  }

  /** Forgets the rate of addresses whose bucket is full again: the map holds recent addresses only. */
  prune(): void {
    for (const [address, rate] of this.#rates) {
      if (rate.tokens >= rate.capacity) this.#rates.delete(address);
    }
    this.auth.prune();
    this.operatorAuth.prune();
  }

  /** Addresses tracked (open connections or a recent connection rate), for tests and metrics. */
  get trackedAddresses(): number {
    return new Set([...this.#openByAddress.keys(), ...this.#rates.keys(), ...this.#pending.groups]).size;
  }
}

function authLimits(limits: EdgeLimits): AuthThrottleLimits {
  return {
    freeFailures: limits.authFreeFailures,
    lockoutFailures: limits.authLockoutFailures,
    lockoutMs: limits.authLockoutMs,
    maxGroups: AUTH_TRACKED_GROUPS,
  };
}

function increment(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 0) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
