/**
 * @module relay/registry
 * Reference-counted interest per stream across all connections. A stream exists while someone is
 * subscribed, plus a short linger after the last one leaves, so that a reconnecting client finds its
 * stream (and its resume ring) still polled instead of a gap. What the registry holds is exactly
 * what the poller polls: no subscriber, no upstream request.
 */
import type { BookDepth, Channel, ResumePoint } from '../protocol/messages.ts';
import { streamKey } from '../util/stream-key.ts';
import { bookCodec, priceCodec } from './channels.ts';
import type { Frame } from './frame.ts';
import {
  type AnyStream,
  type BookStream,
  type ChannelStream,
  type PriceStream,
  Stream,
  type StreamIdentity,
  type StreamSubscriber,
} from './stream.ts';
import { UnknownMarkets } from './unknown-markets.ts';

/** A market upstream did not have is answered from memory for a minute, then asked about again. */
const UNKNOWN_MARKET_TTL_MS = 60_000;
const UNKNOWN_MARKET_CAPACITY = 10_000;

/** Cluster mode: what a stream's recent updates are when this relay's ring no longer has them. */
export interface ResumeHistory {
  /** The cluster's state and history of these streams, after each resume point. */
  fetch(
    channel: Channel,
    depth: BookDepth | undefined,
    points: readonly [market: string, from: ResumePoint][],
  ): Promise<ClusterReplay>;
}

/** What was fetched, replayed when the client joins (restoring a stream new on this relay). */
export interface ClusterReplay {
  replay(stream: ChannelStream, from: ResumePoint): Frame[] | undefined;
}

export interface RegistryOptions {
  lingerMs: number;
  resumeBufferSize: number;
  /** Cluster mode: the cluster's history, for resume points beyond this relay's rings. */
  resumeHistory?: ResumeHistory;
  /** Called whenever the set of streams (so the set of polled markets) changes. */
  onInterestChange: () => void;
}

export class StreamRegistry {
  readonly #options: RegistryOptions;
  readonly #streams = new Map<string, ChannelStream>();
  readonly #bookStreamsByMarket = new Map<string, Set<BookStream>>();
  readonly #priceStreams = new Map<string, PriceStream>();
  readonly #lingerTimers = new Map<string, NodeJS.Timeout>();

  readonly resumeHistory: ResumeHistory | undefined;

  /** Markets upstream recently did not have: subscriptions to them are refused without a poll. */
  readonly unknownMarkets: UnknownMarkets;

  constructor(options: RegistryOptions) {
    this.#options = options;
    this.resumeHistory = options.resumeHistory;
    this.unknownMarkets = new UnknownMarkets({
      ttlMs: UNKNOWN_MARKET_TTL_MS,
      capacity: UNKNOWN_MARKET_CAPACITY,
    });
  }

  get size(): number {
    return this.#streams.size;
  }

  streams(): IterableIterator<ChannelStream> {
    return this.#streams.values();
  }

  get(identity: StreamIdentity): ChannelStream | undefined {
    return this.#streams.get(streamKey(identity.channel, identity.market, identity.depth));
  }

  /** Markets with at least one `book` stream, each with its streams (one per depth). */
  bookMarkets(): ReadonlyMap<string, ReadonlySet<BookStream>> {
    return this.#bookStreamsByMarket;
  }

  priceMarkets(): ReadonlyMap<string, PriceStream> {
    return this.#priceStreams;
  }

  subscribe(subscriber: StreamSubscriber, identity: StreamIdentity): ChannelStream {
    const key = streamKey(identity.channel, identity.market, identity.depth);
    let stream = this.#streams.get(key);
    if (stream === undefined) {
      stream = this.#create(identity);
      this.#options.onInterestChange();
    }
    const linger = this.#lingerTimers.get(key);
    if (linger !== undefined) {
      clearTimeout(linger);
      this.#lingerTimers.delete(key);
    }
    stream.subscribers.add(subscriber);
    return stream;
  }

  unsubscribe(subscriber: StreamSubscriber, stream: AnyStream): void {
    if (!stream.subscribers.delete(subscriber) || stream.subscribers.size > 0) return;
    const registered = this.#streams.get(stream.key);
    if (registered !== stream) return;
    const timer = setTimeout(() => {
      this.#lingerTimers.delete(registered.key);
      if (registered.subscribers.size === 0) this.#remove(registered);
    }, this.#options.lingerMs);
    timer.unref();
    this.#lingerTimers.set(stream.key, timer);
  }

  /** The market is gone upstream: every stream of `channel` for it ends now. */
  closeMarket(channel: Channel, market: string, reason: string): ChannelStream[] {
    this.unknownMarkets.add(market);
    const streams: ChannelStream[] =
      channel === 'book'
        ? [...(this.#bookStreamsByMarket.get(market) ?? [])]
        : [this.#priceStreams.get(market)].filter((stream) => stream !== undefined);
    for (const stream of streams) {
      stream.close(reason);
      this.#remove(stream);
    }
    return streams;
  }

  /** Ends everything (shutdown). */
  clear(): void {
    for (const timer of this.#lingerTimers.values()) clearTimeout(timer);
    this.#lingerTimers.clear();
    this.#streams.clear();
    this.#bookStreamsByMarket.clear();
    this.#priceStreams.clear();
  }

  #create(identity: StreamIdentity): ChannelStream {
    const { resumeBufferSize } = this.#options;
    if (identity.channel === 'book') {
      const stream: BookStream = new Stream({ ...identity, channel: 'book' }, bookCodec, resumeBufferSize);
      let byDepth = this.#bookStreamsByMarket.get(identity.market);
      if (byDepth === undefined) {
        byDepth = new Set();
        this.#bookStreamsByMarket.set(identity.market, byDepth);
      }
      byDepth.add(stream);
      this.#streams.set(stream.key, stream);
      return stream;
    }
    const stream: PriceStream = new Stream({ ...identity, channel: 'price' }, priceCodec, resumeBufferSize);
    this.#priceStreams.set(identity.market, stream);
    this.#streams.set(stream.key, stream);
    return stream;
  }

  #remove(stream: ChannelStream): void {
    if (this.#streams.get(stream.key) !== stream) return;
    this.#streams.delete(stream.key);
    const timer = this.#lingerTimers.get(stream.key);
    if (timer !== undefined) {
      clearTimeout(timer);
      this.#lingerTimers.delete(stream.key);
    }
    if (stream.channel === 'book') {
      const byDepth = this.#bookStreamsByMarket.get(stream.market);
      byDepth?.delete(stream);
      if (byDepth?.size === 0) this.#bookStreamsByMarket.delete(stream.market);
    } else {
      this.#priceStreams.delete(stream.market);
    }
    this.#options.onInterestChange();
  }
}
