/**
 * @module relay/admission/market
 * Which markets of a `subscribe` request may cost upstream requests. Subscribing to a market the
 * relay already polls costs nothing and is always admitted. A market it does not poll yet is
 * admitted only while the connection (and its API key) stays within its limits:
 * - a market upstream recently answered "not found" for, or that upstream's catalogue does not
 *   list, is answered `unknown_market` without a poll; only a small relay-wide rate of lookups is
 *   spent on ids the catalogue cannot judge (docs/operations.md "Isolation");
 * - at most so many markets new to the relay per second;
 * - at most so many targets that nobody else wants (private targets).
 * Pure bookkeeping over the registry; the client's session (relay/session/session.ts) sends the answers.
 */

import { createHash } from 'node:crypto';
import { type Channel, channels, type ErrorCode, streamIdKinds } from '../../protocol/messages.ts';
import { TokenBucket } from '../../util/token-bucket.ts';
import type { StreamRegistry } from '../streams/registry.ts';
import { type StreamSubscriber, unknownMarketError } from '../streams/stream.ts';
import type { KnownMarkets } from './known-markets.ts';

export interface IsolationLimits {
  /** Targets only this connection wants, at most. */
  maxPrivateTargetsPerConnection: number;
  /** Targets only connections of this API key want, at most. */
  maxPrivateTargetsPerKey: number;
  /** Markets the relay does not poll yet a connection may add per second (burst: one full request). */
  newMarketsPerSecond: number;
  /** The same, for all connections of one API key together. */
  newMarketsPerSecondPerKey: number;
  /** Upstream lookups per second, relay-wide, for ids the market catalogue does not list. */
  lookupsPerSecond: number;
}

export const defaultIsolationLimits: IsolationLimits = {
  maxPrivateTargetsPerConnection: 200,
  maxPrivateTargetsPerKey: 1_000,
  newMarketsPerSecond: 20,
  newMarketsPerSecondPerKey: 50,
  lookupsPerSecond: 2,
};

/** At least one full subscribe request's worth of markets may arrive at once (or a second's worth). */
const NEW_MARKET_BURST = 100;
const LOOKUP_BURST = 10;

export interface Refusal {
  code: Extract<ErrorCode, 'unknown_market' | 'limit_exceeded' | 'rate_limited'>;
  message: string;
}

interface Owner {
  key: string | undefined;
  /** Who it counts as in the budget's fair share: its API key, else its address group. */
  share: string | undefined;
  newMarkets: TokenBucket;
}

export class MarketAdmission {
  readonly #registry: StreamRegistry;
  readonly #catalogue: KnownMarkets | undefined;
  readonly #limits: IsolationLimits;
  readonly #now: () => number;
  readonly #owners = new Map<StreamSubscriber, Owner>();
  readonly #keyBuckets = new Map<string, { bucket: TokenBucket; connections: number }>();
  readonly #lookups: TokenBucket;

  constructor(options: {
    registry: StreamRegistry;
    catalogue?: KnownMarkets;
    limits: IsolationLimits;
    now?: () => number;
  }) {
    this.#registry = options.registry;
    this.#catalogue = options.catalogue;
    this.#limits = options.limits;
    this.#now = options.now ?? Date.now;
    this.#lookups = new TokenBucket({
      ratePerSecond: options.limits.lookupsPerSecond,
      capacity: LOOKUP_BURST,
      now: this.#now,
    });
  }

  get limits(): IsolationLimits {
    return this.#limits;
  }

  /**
   * A connection opened, authenticated with `key` when the relay requires keys, from client address
   * group `group` (relay/admission/client-address.ts).
   */
  open(subscriber: StreamSubscriber, key: string | undefined, group?: string): void {
    this.#owners.set(subscriber, {
      key,
      share:
        key !== undefined ? `key ${keyLabel(key)}` : group === undefined ? undefined : `address ${group}`,
      newMarkets: this.#bucket(this.#limits.newMarketsPerSecond),
    });
    if (key === undefined) return;
    const shared = this.#keyBuckets.get(key);
    if (shared !== undefined) shared.connections += 1;
    else
      this.#keyBuckets.set(key, {
        bucket: this.#bucket(this.#limits.newMarketsPerSecondPerKey),
        connections: 1,
      });
  }

  /**
   * Who the subscriber counts as in the fair share of the budget (relay/poll/share-groups.ts): its
   * API key, so that a key's connections together have one share wherever they come from; without
   * keys its client address group, so that an address has one share however many connections it
   * opens; the connection itself when neither is known. A relay-internal subscriber (a session's
   * wildcard following the catalogue) counts as the connection it works for. A key is named by a
   * digest of it, never itself: the name is shown on the status page.
   */
  shareOwner(subscriber: StreamSubscriber): unknown {
    const client = subscriber.behalfOf ?? subscriber;
    return this.#owners.get(client)?.share ?? client;
  }

  close(subscriber: StreamSubscriber): void {
    const owner = this.#owners.get(subscriber);
    this.#owners.delete(subscriber);
    if (owner?.key === undefined) return;
    const shared = this.#keyBuckets.get(owner.key);
    if (shared !== undefined && --shared.connections === 0) this.#keyBuckets.delete(owner.key);
  }

  /**
   * The markets of `markets` (canonical ids the subscriber does not hold yet on `channel`) that must
   * not be subscribed, each with the error to answer. Takes the rate tokens of those admitted.
   * `listed`: the markets come from upstream's catalogue (a wildcard subscription), so none is
   * looked up; one upstream said it does not have is still refused.
   */
  admit(
    subscriber: StreamSubscriber,
    channel: Channel,
    markets: readonly string[],
    options: { listed?: boolean } = {},
  ): Map<string, Refusal> {
    const refused = new Map<string, Refusal>();
    const owner = this.#owners.get(subscriber);
    const keyBucket = owner?.key === undefined ? undefined : this.#keyBuckets.get(owner.key)?.bucket;
    let privateCounts: { own: number; key: number } | undefined;
    for (const market of markets) {
      if (options.listed === true) this.#catalogue?.learn(market);
      const unknown =
        options.listed === true ? this.#notFound(channel, market) : this.#unknown(channel, market);
      if (unknown !== undefined) {
        refused.set(market, unknown);
        continue;
      }
      const held = this.#heldBy(channel, market, (other) => other === subscriber);
      if (held === 'others') continue; // shared: free
      privateCounts ??= this.#privateCounts(subscriber, owner?.key);
      if (privateCounts.own >= this.#limits.maxPrivateTargetsPerConnection) {
        refused.set(market, {
          code: 'limit_exceeded',
          message: `at most ${this.#limits.maxPrivateTargetsPerConnection} markets that no other connection subscribes to`,
        });
        continue;
      }
      if (owner?.key !== undefined && privateCounts.key >= this.#limits.maxPrivateTargetsPerKey) {
        refused.set(market, {
          code: 'limit_exceeded',
          message: `at most ${this.#limits.maxPrivateTargetsPerKey} markets per API key that no other key subscribes to`,
        });
        continue;
      }
      if (held === 'nobody' && !this.#takeNewMarket(owner, keyBucket)) {
        refused.set(market, {
          code: 'rate_limited',
          message: `at most ${this.#limits.newMarketsPerSecond} markets per second that the relay does not poll yet`,
        });
        continue;
      }
      privateCounts.own += 1;
      privateCounts.key += 1;
    }
    return refused;
  }

  /** unknown_market for a market upstream answered "not found" for. */
  #notFound(channel: Channel, market: string): Refusal | undefined {
    return this.#registry.unknownMarkets.has(market) ? this.#unknownMarket(channel, market) : undefined;
  }

  #unknownMarket(channel: Channel, market: string): Refusal {
    return { code: 'unknown_market', message: unknownMarketError(channel, market).message };
  }

  /** unknown_market without a poll: remembered as not found, or not in a complete catalogue. */
  #unknown(channel: Channel, market: string): Refusal | undefined {
    const notFound = this.#unknownMarket(channel, market);
    if (this.#registry.unknownMarkets.has(market)) return notFound;
    if (streamIdKinds[channel] !== 'market' || this.#registry.isMarketPolled(market)) return undefined;
    if (this.#catalogue?.verdict(market) !== 'not_listed') return undefined;
    // Listed after the catalogue was read, or a typo: a few lookups a second find out by polling.
    if (this.#lookups.tokens >= 1) {
      this.#lookups.reserve();
      return undefined;
    }
    return notFound;
  }

  #takeNewMarket(owner: Owner | undefined, keyBucket: TokenBucket | undefined): boolean {
    if (owner === undefined) return true;
    if (owner.newMarkets.tokens < 1 || (keyBucket !== undefined && keyBucket.tokens < 1)) return false;
    owner.newMarkets.reserve();
    keyBucket?.reserve();
    return true;
  }

  /**
   * Whether the market's streams on `channel` have no subscriber, only subscribers `mine` accepts,
   * or others too. Stops at the first other one: a market a thousand clients share costs one step.
   */
  #heldBy(
    channel: Channel,
    market: string,
    mine: (subscriber: StreamSubscriber) => boolean,
  ): 'nobody' | 'only-mine' | 'others' {
    let any = false;
    for (const stream of this.#registry.streamsOf(channel, market)) {
      for (const subscriber of stream.subscribers) {
        if (!mine(subscriber)) return 'others';
        any = true;
      }
    }
    return any ? 'only-mine' : 'nobody';
  }

  /** Targets only `subscriber` wants, and targets only connections of `key` want. */
  #privateCounts(subscriber: StreamSubscriber, key: string | undefined): { own: number; key: number } {
    const counts = { own: 0, key: 0 };
    const ofKey = (other: StreamSubscriber) => this.#owners.get(other)?.key === key;
    const count = (channel: Channel, market: string) => {
      if (this.#heldBy(channel, market, (other) => other === subscriber) === 'only-mine') counts.own += 1;
      if (key !== undefined && this.#heldBy(channel, market, ofKey) === 'only-mine') counts.key += 1;
    };
    for (const channel of channels)
      for (const market of this.#registry.ids(channel).keys()) count(channel, market);
    return counts;
  }

  #bucket(ratePerSecond: number): TokenBucket {
    return new TokenBucket({
      ratePerSecond,
      capacity: Math.max(NEW_MARKET_BURST, ratePerSecond),
      now: this.#now,
    });
  }
}

/** A key's name where it may be shown: the first hex digits of its SHA-256. */
function keyLabel(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}
