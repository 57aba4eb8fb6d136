/**
 * @module relay/admission/market
 * Which markets of a `subscribe` request may cost upstream requests. Subscribing to a market the
 * relay already polls costs nothing and is always admitted. A market it does not poll yet is
 * admitted only while the connection (and its API key) stays within its limits:
 * - a market upstream recently answered "not found" for, or that upstream's catalogue does not
 *   list, is answered `unknown_market` without a poll; only a small relay-wide rate of lookups is
 *   spent on ids the catalogue cannot judge (docs/operations.md "Isolation");
 * - at most so many markets new to the relay per second;
 * - at most so many targets that nobody else wants (private targets);
 * - per connection and per client address group, bounded distinct `rest` paths, catalogue filters and
 *   streams of the channels that declare a bound, streams created at a bounded rate, and `rest`
 *   paths upstream has not answered yet at a smaller one (./group-streams.ts).
 * Pure bookkeeping over the registry; the client's session (relay/session/session.ts) sends the answers.
 */
import { createHash } from 'node:crypto';
import { marketOfStreamId } from '../../../packages/protocol/src/protocol/channels.ts';
import { type Channel, channels, type ErrorCode } from '../../../packages/protocol/src/protocol/messages.ts';
import { TokenBucket } from '../../upstream/rate-gate.ts';
import { unknownMarketError } from '../streams/frame.ts';
import type { StreamRegistry } from '../streams/registry.ts';
import type { AnyStream, StreamSubscriber } from '../streams/stream.ts';
import { defaultGroupLimits, type GroupLimits, GroupStreams } from './group-streams.ts';
import type { KnownMarkets } from './known-markets.ts';

export interface IsolationLimits extends GroupLimits {
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
  ...defaultGroupLimits,
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
  readonly #groups: GroupStreams;

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
    this.#groups = new GroupStreams(options.limits, this.#now);
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
   * group `addressGroup` (relay/admission/client-address.ts; undefined: a group of its own).
   */
  open(subscriber: StreamSubscriber, key: string | undefined, addressGroup?: string): void {
    this.#groups.open(subscriber, addressGroup);
    this.#owners.set(subscriber, {
      key,
      share:
        key !== undefined
          ? `key ${keyLabel(key)}`
          : addressGroup === undefined
            ? undefined
            : `address ${addressGroup}`,
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
    this.#groups.close(subscriber);
    const owner = this.#owners.get(subscriber);
    this.#owners.delete(subscriber);
    if (owner?.key === undefined) return;
    const shared = this.#keyBuckets.get(owner.key);
    if (shared !== undefined && --shared.connections === 0) this.#keyBuckets.delete(owner.key);
  }

  /**
   * Why a subscribe that adds `added` (ids the subscriber does not hold yet) on `channel` is refused
   * whole, as `limit_exceeded`: over a per-connection or per-address bound on distinct `rest` paths,
   * catalogue filters or a bounded channel's streams. Undefined when within them.
   */
  exceeds(subscriber: StreamSubscriber, channel: Channel, added: readonly string[]): Refusal | undefined {
    const message = this.#groups.exceeds(subscriber, channel, added);
    return message === undefined ? undefined : { code: 'limit_exceeded', message };
  }

  /** The subscriber's use of each bounded channel's per-connection bound. */
  connectionUse(subscriber: StreamSubscriber): Record<string, { held: number; allowed: number }> {
    return this.#groups.connectionUse(subscriber);
  }

  /** The subscriber joined `stream` (its bounded kinds are counted until it leaves). */
  joined(subscriber: StreamSubscriber, stream: AnyStream): void {
    this.#groups.joined(subscriber, stream.channel, stream.market);
  }

  /** The subscriber left `stream`, or the stream ended. */
  left(subscriber: StreamSubscriber, stream: AnyStream): void {
    if (stream.hasState) this.#groups.confirm(stream.channel, stream.market);
    this.#groups.left(subscriber, stream.channel, stream.market);
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
      const rated =
        held === 'nobody' ? this.#takeNewStream(subscriber, owner, keyBucket, channel, market) : undefined;
      if (rated !== undefined) {
        refused.set(market, rated);
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
    // One of a market's several streams is judged by its market: polling one upstream lacks is wasted.
    const judged = marketOfStreamId(channel, market);
    if (judged === undefined) return undefined;
    if (this.#registry.isMarketPolled(judged)) return undefined;
    if (this.#catalogue?.verdict(judged) !== 'not_listed') return undefined;
    // Listed after the catalogue was read, or a typo: a few lookups a second find out by polling.
    if (this.#lookups.tokens >= 1) {
      this.#lookups.reserve();
      return undefined;
    }
    return notFound;
  }

  /**
   * A stream nobody holds: one token each from the connection's, its key's and its address group's
   * buckets of new streams, and from the group's unconfirmed ones for an id upstream has not answered
   * yet; or the refusal naming the rate that ran out (nothing taken).
   */
  #takeNewStream(
    subscriber: StreamSubscriber,
    owner: Owner | undefined,
    keyBucket: TokenBucket | undefined,
    channel: Channel,
    id: string,
  ): Refusal | undefined {
    if (owner === undefined) return undefined;
    for (const stream of this.#registry.streamsOf(channel, id))
      if (stream.hasState) this.#groups.confirm(channel, id);
    const unconfirmed = this.#groups.unconfirmed(subscriber, channel, id);
    if (unconfirmed !== undefined && unconfirmed.tokens < 1)
      return {
        code: 'rate_limited',
        message: `at most ${this.#limits.unconfirmedPathsPerSecondPerAddress} paths per second per client address that upstream has not answered yet`,
      };
    const group = this.#groups.newStreams(subscriber);
    if (group !== undefined && group.tokens < 1)
      return {
        code: 'rate_limited',
        message: `at most ${this.#limits.newStreamsPerSecondPerAddress} streams per second per client address that the relay does not poll yet`,
      };
    if (owner.newMarkets.tokens < 1 || (keyBucket !== undefined && keyBucket.tokens < 1))
      return {
        code: 'rate_limited',
        message: `at most ${this.#limits.newMarketsPerSecond} markets per second that the relay does not poll yet`,
      };
    for (const bucket of [owner.newMarkets, keyBucket, group, unconfirmed]) bucket?.reserve();
    return undefined;
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
