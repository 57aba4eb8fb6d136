/**
 * @module relay/streams/registry
 * Reference-counted interest per stream across all connections. A stream exists while someone is
 * subscribed, plus a short linger after the last one leaves, so that a reconnecting client finds its
 * stream (and its resume ring) still polled instead of a gap. What the registry holds is exactly
 * what the poller polls: no subscriber, no upstream request. Streams are found by key, and per
 * channel by stream id (a market, a feed, `all`): what a poll target asks for.
 */

import { streamKey } from '../../../packages/protocol/src/channels/stream-key.ts';
import {
  type BookDepth,
  type Channel,
  channels,
  type ResumePoint,
} from '../../../packages/protocol/src/protocol/messages.ts';
import { codecs } from '../channels/codecs.ts';
import { idsAreMarkets } from '../channels/relay-registry.ts';
import type { Frame } from './frame.ts';
import type { ResumeBounds } from './resume-ring.ts';
import {
  type AnyStream,
  type ChannelStream,
  Stream,
  type StreamOf,
  type StreamSubscriber,
} from './stream.ts';
import type { StreamIdentity } from './stream-identity.ts';
import { UnknownMarkets } from './unknown-markets.ts';

/** A market upstream did not have is answered from memory for a minute, then asked about again. */
const UNKNOWN_MARKET_TTL_MS = 60_000;
const UNKNOWN_MARKET_CAPACITY = 10_000;

/**
 * Where a stream's recent updates are looked for when this relay's resume ring no longer has them
 * (the coordination broker's: a relay alone has only its rings, a cluster has Redis).
 */
export interface ResumeHistory {
  /**
   * The history of `channel`'s streams after each resume point; the replay at once when there is
   * nothing to wait for (no such history of this channel).
   */
  fetch(
    channel: Channel,
    depth: BookDepth | undefined,
    points: readonly [market: string, from: ResumePoint][],
  ): HistoryReplay | Promise<HistoryReplay>;
}

/** What was fetched, replayed when `subscriber` joins (restoring a stream new on this relay). */
export interface HistoryReplay {
  replay(stream: ChannelStream, subscriber: StreamSubscriber, from: ResumePoint): Frame[] | undefined;
}

/** Nothing beyond the resume rings: a point they do not hold is not resumed. */
export const NOTHING_FETCHED: HistoryReplay = { replay: () => undefined };
export const RINGS_ALONE: ResumeHistory = { fetch: () => NOTHING_FETCHED };

export interface RegistryOptions {
  lingerMs: number;
  resumeBufferSize: number;
  /** The bytes each stream's resume ring holds at most (`--resume-buffer-bytes`; 8 MiB unless set). */
  resumeBufferBytes?: number;
  /** How long an update stays in a stream's resume ring (`--history-ms`; no bound unless set). */
  resumeBufferMs?: number;
  /** The broker's history, for resume points beyond this relay's rings; the rings alone unless given. */
  resumeHistory?: ResumeHistory;
  /** Called whenever a paced group sends a stream's snapshot: to how many clients (metrics). */
  onPacedSend?: (stream: AnyStream, frame: Frame, recipients: number) => void;
}

/** The stream id whose streams came or went (one of them: a book depth, say). */
export interface InterestChange {
  channel: Channel;
  id: string;
}

/**
 * What the poll side (relay/poll/poller-pool.ts) is told as interest changes, one stream id at a
 * time: a subscribe costs the poll side that stream id's target, whatever else is held.
 */
export interface PollInterest {
  /** A stream of `change`'s stream id came or went (a book depth, say): its target may be wanted now, or no more. */
  wanted(change: InterestChange): void;
  /** A subscriber came to or left `stream`: who holds its poll target changed. */
  holdersChanged(stream: AnyStream): void;
}

/** Until the poll side is wired: a registry nothing polls for (a session's or a codec's test). */
const NOT_POLLED: PollInterest = { wanted() {}, holdersChanged() {} };

/** Per stream id, its streams of one channel (one per depth for `book`, else one). */
type StreamsById = Map<string, Set<ChannelStream>>;

const NO_STREAMS: ReadonlySet<never> = new Set();

export class StreamRegistry {
  readonly #options: RegistryOptions;
  readonly #streams = new Map<string, ChannelStream>();
  readonly #byChannel = new Map<Channel, StreamsById>(channels.map((channel) => [channel, new Map()]));
  readonly #lingerTimers = new Map<string, NodeJS.Timeout>();
  #poll: PollInterest = NOT_POLLED;

  readonly resumeHistory: ResumeHistory;

  /** Markets (and feeds) upstream recently did not have: subscriptions to them are refused without a poll. */
  readonly unknownMarkets: UnknownMarkets;

  constructor(options: RegistryOptions) {
    this.#options = options;
    this.resumeHistory = options.resumeHistory ?? RINGS_ALONE;
    this.unknownMarkets = new UnknownMarkets({
      ttlMs: UNKNOWN_MARKET_TTL_MS,
      capacity: UNKNOWN_MARKET_CAPACITY,
    });
  }

  get size(): number {
    return this.#streams.size;
  }

  /** The poll side told of every change of interest from now on: one, wired once. */
  polledBy(poll: PollInterest): void {
    if (this.#poll !== NOT_POLLED) throw new Error('a stream registry is polled by one poller pool');
    this.#poll = poll;
  }

  streams(): IterableIterator<ChannelStream> {
    return this.#streams.values();
  }

  get(identity: StreamIdentity): ChannelStream | undefined {
    return this.#streams.get(streamKey(identity.channel, identity.market, identity.depth, identity.group));
  }

  /** The stream ids with at least one stream of `channel`, each with its streams. */
  ids<C extends Channel>(channel: C): ReadonlyMap<string, ReadonlySet<StreamOf<C>>> {
    // Each channel's map holds only streams of that channel (#create files them by `channel`).
    return this.#byChannel.get(channel) as Map<string, Set<StreamOf<C>>>;
  }

  /** The streams of `channel` for stream id `id` (none: an empty set). */
  streamsOf<C extends Channel>(channel: C, id: string): ReadonlySet<StreamOf<C>> {
    return this.ids(channel).get(id) ?? NO_STREAMS;
  }

  /** Whether any channel whose stream ids are market UUIDs streams `market` now (it exists upstream). */
  isMarketPolled(market: string): boolean {
    return channels.some((channel) => idsAreMarkets(channel) && this.#byId(channel).has(market));
  }

  subscribe(subscriber: StreamSubscriber, identity: StreamIdentity): ChannelStream {
    const key = streamKey(identity.channel, identity.market, identity.depth, identity.group);
    let stream = this.#streams.get(key);
    if (stream === undefined) {
      stream = this.#create(identity);
      this.#poll.wanted({ channel: stream.channel, id: stream.market });
    }
    const linger = this.#lingerTimers.get(key);
    if (linger !== undefined) {
      clearTimeout(linger);
      this.#lingerTimers.delete(key);
    }
    stream.subscribers.add(subscriber);
    this.#poll.holdersChanged(stream);
    return stream;
  }

  unsubscribe(subscriber: StreamSubscriber, stream: AnyStream): void {
    if (!stream.subscribers.delete(subscriber)) return;
    this.#poll.holdersChanged(stream);
    if (stream.subscribers.size > 0) return;
    const registered = this.#streams.get(stream.key);
    if (registered !== stream) return;
    const timer = setTimeout(() => {
      this.#lingerTimers.delete(registered.key);
      if (registered.subscribers.size === 0) this.#remove(registered);
    }, this.#options.lingerMs);
    timer.unref();
    this.#lingerTimers.set(stream.key, timer);
  }

  /** The market (or feed) is gone upstream: every stream of `channel` for it ends now. */
  closeMarket(channel: Channel, market: string, reason: string): ChannelStream[] {
    this.unknownMarkets.add(market);
    return this.closeStreams(channel, market, reason);
  }

  /**
   * The streams of `channel` for `id` end now with `reason` (`status closed`), the id still known
   * upstream (a market that expired or resolved).
   */
  closeStreams(channel: Channel, id: string, reason: string): ChannelStream[] {
    const streams = [...(this.#byId(channel).get(id) ?? [])];
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
    for (const byId of this.#byChannel.values()) byId.clear();
  }

  #byId(channel: Channel): StreamsById {
    return this.#byChannel.get(channel)!;
  }

  #create(identity: StreamIdentity): ChannelStream {
    const { resumeBufferSize, resumeBufferBytes, resumeBufferMs } = this.#options;
    const stream = createStream(identity, {
      updates: resumeBufferSize,
      bytes: resumeBufferBytes,
      ms: resumeBufferMs,
    });
    stream.onPacedSend = this.#options.onPacedSend;
    this.#streams.set(stream.key, stream);
    const byId = this.#byId(stream.channel);
    let streams = byId.get(stream.market);
    if (streams === undefined) {
      streams = new Set();
      byId.set(stream.market, streams);
    }
    streams.add(stream);
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
    const byId = this.#byId(stream.channel);
    const streams = byId.get(stream.market);
    streams?.delete(stream);
    if (streams?.size === 0) byId.delete(stream.market);
    this.#poll.wanted({ channel: stream.channel, id: stream.market });
  }
}

/** A new stream of `identity`'s channel, with that channel's codec. */
function createStream(identity: StreamIdentity, resume: ResumeBounds): ChannelStream {
  // A stream of the union of channels is a stream of one of them: the union of their stream types.
  return streamOf(identity, resume) as ChannelStream;
}

function streamOf<C extends Channel>(identity: StreamIdentity<C>, resume: ResumeBounds): StreamOf<C> {
  return new Stream(identity, codecs[identity.channel], resume);
}
