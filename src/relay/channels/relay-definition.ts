/**
 * @module relay/channels/relay-definition
 * What a channel declares of its server part: how two of its states are diffed (its codec); for a
 * channel polled one upstream request per stream id, that request and how its response becomes the
 * channel's state; for one whose streams deliver each entry once, how a poll reads what is new; for
 * one whose streams keep a state across polls, what a stream keeps and how a poll grows it; for one
 * served from a market's order book, its state of that book; what its polls' events log and count;
 * and a bound on the streams one connection and one client address may hold. The relay runs every
 * such channel through the same code (relay/channels/codecs.ts, relay/poll/stream-targets.ts,
 * relay/poll/incremental-target.ts, relay/poll/kept-target.ts, relay/channels/book/book-target.ts,
 * relay/admission/group-streams.ts); ./relay-registry.ts lists them.
 */
import type { z } from 'zod';
import type { SinceSpec } from '../../../packages/protocol/src/channels/history.ts';
import type { Channel } from '../../../packages/protocol/src/protocol/channels.ts';
import type { BookDepth } from '../../../packages/protocol/src/protocol/messages.ts';
import type { OrderBook } from '../../upstream/schemas.ts';

/** A diff's answer that the state changed but is best sent whole, as a snapshot with the next `seq`. */
export const sendWhole: unique symbol = Symbol('send the state whole');

/** How a channel's states are compared and described on the wire. */
export interface StreamCodec<State, Delta> {
  /** The update from `prev` to `next`; null when nothing changed. */
  diff(prev: State, next: State): Delta | null | typeof sendWhole;
  /** The checksum of the state after each message, for a channel whose messages carry one. */
  checksum?(state: State): number;
  /**
   * Whether an update that would be larger than the snapshot of the state it leads to goes out as
   * that snapshot instead (`rest`, whose patches of an arbitrary body may outgrow it; the other
   * channels' updates are a part of their state).
   */
  noUpdateLargerThanSnapshot?: boolean;
}

/** One stream of a numbered target: its name in the target's state, and its depth (`book`). */
export interface TargetStream {
  readonly field: string;
  readonly depth: BookDepth | undefined;
}

/**
 * A channel whose streams of a market are numbered as one poll target, by whichever broker numbers
 * them (relay/coordination/codecs.ts): every stream of the target, how each is cut from the
 * target's state, and how its updates are made and applied.
 */
export interface TargetNumbering<Name extends Channel, State, Delta> extends StreamCodec<State, Delta> {
  /** Numbered streams always have an update to send when their state changed. */
  diff(prev: State, next: State): Delta | null;
  readonly channel: Name;
  /** Every stream of a target, numbered whether or not anyone here subscribes. */
  readonly streams: readonly TargetStream[];
  /** The state of one of the target's streams, cut from the target's state. */
  project(state: State, depth: BookDepth | undefined): State;
  apply(state: State, delta: Delta): State;
}

/** A channel polled one upstream request per stream id, whatever the number of its subscribers. */
export interface PolledPerStream<Upstream, Response, State> {
  /** The upstream request of one poll. */
  ask(upstream: Upstream, streamId: string): Promise<Response>;
  /** How a shared response is validated again on arrival (the endpoint's own schema). */
  readonly schema: z.ZodType<Response>;
  /** The channel's state of a response. */
  stateOf(response: Response): State;
  /** Upstream's time of the response's data, ISO 8601 with ms; undefined: the receive time. */
  tsOf(response: Response): string | undefined;
}

/**
 * A map that answers for every market in one request and doubles as the books' change hints
 * (relay/channels/book/change-hint-target.ts): a market whose entry differs from the previous answer's has
 * moved at the top of its book. ./relay-registry.ts names the channel whose polls read it.
 */
export interface ChangeHintMap<Upstream, Response, Entry> {
  /** The map's own request, made while no stream of the channel polls it anyway. */
  ask(upstream: Upstream): Promise<Response>;
  /** Each market of the map (its id in lower case) with its entry. */
  entries(response: Response): Iterable<readonly [market: string, entry: Entry]>;
  /** What of an entry moves with the market's top of book, as one string to compare. */
  fingerprint(entry: Entry): string;
}

/**
 * A channel whose streams of a market are served by the market's book target
 * (relay/channels/book/book-target.ts), from the one request that serves its `book` streams.
 */
export interface ServedFromBook<State> {
  /** The channel's state of upstream's book (the whole book, every entry parsed). */
  stateOf(book: OrderBook): State;
}

/**
 * A channel polled per stream id whose stream delivers each entry once: a poll reads as many
 * requests as what is new needs, and the target remembers per stream what it delivered (a new
 * stream, a new epoch, starts afresh). The relay runs it in relay/poll/incremental-target.ts,
 * which asks (in cluster mode only the lease holder), drops late responses, publishes, shares and
 * reports.
 */
export interface PolledIncrementally<Upstream, State, Memory, Fresh, EventMap extends EventArgs<EventMap>> {
  /** A new stream's memory of what it delivered. */
  memory(): Memory;
  /** One poll's requests: what they found new to the stream, not yet taken into its memory. */
  read(upstream: Upstream, streamId: string, memory: Memory, hooks: ReadHooks<EventMap>): Promise<Fresh>;
  /**
   * The successive states that deliver `fresh` (what a poll read, or a peer shared) after `state`,
   * none when nothing is new to the stream; `memory` takes in what they deliver.
   */
  statesOf(state: State | undefined, fresh: Fresh, memory: Memory): State[];
  /** What the lease holder shares after a poll: `fresh`, and enough of `state` for a peer to start from. */
  shared(state: State, fresh: Fresh): Fresh;
  /** How a shared body is validated again on arrival. */
  readonly schema: z.ZodType<Fresh>;
}

/** What a channel's incremental read may tell the target it runs in. */
export interface ReadHooks<EventMap extends EventArgs<EventMap>> {
  /**
   * A request is about to go out: the target counts it in its poll (a refusal of the first request
   * may say upstream has no such id; of a later one, only that it failed).
   */
  onRequest(): void;
  /** Emits one of the channel's events on the relay's. */
  emit<E extends keyof EventMap>(event: E, ...args: EventMap[E]): void;
}

/** An event map: each event's listener arguments. */
export type EventArgs<EventMap> = { [E in keyof EventMap]: unknown[] };

/**
 * What one stream of a channel polled per stream id keeps between polls, each poll's reads merged
 * into it rather than replacing it (a series grown from upstream's history). In cluster mode the
 * lease holder shares it whole after each poll, and the others publish it and carry on from it.
 * The relay runs it in relay/poll/kept-target.ts.
 */
export interface StreamKeeper<Upstream, State, EventMap extends EventArgs<EventMap>> {
  /** The market whose absence upstream (the poll's first request refused) ends the stream. */
  readonly market: string;
  /** The channel's state of what is kept. */
  readonly state: State;
  /** One poll's reads, merged in only by `apply` once they are known to be the newest. */
  read(poll: KeptPoll<Upstream, EventMap>): Promise<KeptRead>;
  /** What the lease holder shares after a poll applied. */
  shared(): unknown;
  /** A peer's share taken over (validated here: nothing from the wire is trusted); false when invalid. */
  takeShared(body: unknown, receivedAt: number): boolean;
}

/** One poll of a kept stream: what it reads from, when it was asked, and what it may tell its target. */
export interface KeptPoll<Upstream, EventMap extends EventArgs<EventMap>> extends ReadHooks<EventMap> {
  readonly upstream: Upstream;
  readonly askedAt: number;
}

export interface KeptRead {
  /** Merges the read in (a response applied too late must change nothing, so only now). */
  apply(): void;
}

/**
 * A channel that serves history (docs/protocol.md "History since a time"): a subscription with
 * `since` gets one snapshot made of the history read from upstream, the stream's data at the join
 * and the live messages held meanwhile (relay/session/since-seam.ts). `Data` is the channel's data
 * (snapshot and update alike), `Read` what a read holds.
 */
export interface ServesHistory<Upstream, Data, Read> {
  /**
   * What `streamId`'s history since `since` holds, at relay time `now`: each upstream request goes
   * out through `request`, which gives it its slot of the upstream budget.
   */
  read(
    upstream: Upstream,
    streamId: string,
    since: SinceSpec,
    now: number,
    request: <T>(ask: () => Promise<T>) => Promise<T>,
    /** The relay's record, when it records: what it holds is not asked of upstream. */
    record?: RecordedHistory,
  ): Promise<HistoryRead<Read>>;
  /**
   * The snapshot's data: `read` (read after the join), with `join`, the data of the message the
   * subscriber joined the stream at, and the messages it was sent since, oldest first. The snapshot
   * goes out at the last of them, with the checksum of its data when the channel's messages carry one.
   */
  snapshotOf(read: Read, since: SinceSpec, join: Data, held: readonly HeldMessage<Data>[]): Data;
  /** Of a channel whose `since` may name an entry: what its id is called, for an error message. */
  readonly idName?: string;
  /**
   * Of a channel that answers some `since` from another stream's record alone (docs/history.md
   * "Since"): that stream, and from when its record must reach back for `read` to answer.
   */
  recordOnly?(streamId: string, since: SinceSpec): RecordReach | undefined;
}

/** A stream of the record, and from when (ms) it must reach back. */
export interface RecordReach {
  channel: Channel;
  streamId: string;
  from: number;
}

/** The relay's record as a channel's history reads it (docs/history.md "Since"). */
export interface RecordedHistory {
  /**
   * The `data` of every recorded message of a stream from `from` (ms, inclusive) on, oldest first;
   * undefined when the record does not reach back to `from`.
   */
  since(channel: Channel, streamId: string, from: number): Promise<unknown[] | undefined>;
  /**
   * The stream's last unbroken run of recorded messages after `after` (ms), from the snapshot that
   * starts it: each message following the one before it (same epoch, next seq). Undefined when the
   * record holds no such run.
   */
  lastRun(channel: Channel, streamId: string, after: number): Promise<RecordedRun | undefined>;
}

/** A run of a stream's record: its messages' `data`, oldest first. */
export interface RecordedRun {
  data: unknown[];
  /**
   * Whether it runs on to the subscriber's join in the subscriber's epoch: with the live messages
   * held since, one history. Else (another relay's epoch, or this relay's before it lost the lease
   * or restarted) what came after its end is not in it.
   */
  reachesJoin: boolean;
}

/** A live message held while a history is read. */
export interface HeldMessage<Data> {
  type: 'snapshot' | 'update';
  data: Data;
}

/** A history read: what it holds, or why it holds nothing. */
export type HistoryRead<Read> =
  | ({
      ok: true;
      pages: number;
      /**
       * Where the history starts (ms) when its source's listing ended later than the time asked:
       * the subscription's `history` then says `complete: false` (docs/protocol.md "History and replay").
       */
      startsAt?: number;
    } & Read)
  | { ok: false; reason: 'too_many' | 'not_found'; message: string; pages: number };

/**
 * A bound on the distinct streams of a channel that one connection, and one client address group's
 * connections together, may hold (docs/operations.md "Isolation"), for streams that cost the most
 * to start and keep. Its two limits are the relay's options `--max-<option>` and
 * `--max-<option>-per-address`, read into the fields `Limits` names.
 */
export interface GroupBound<Limits> {
  /** The streams as a refusal and `--help` name them. */
  readonly noun: string;
  /** The streams as docs/operations.md's table names them (markdown). */
  readonly doc: string;
  /** The options' stem. */
  readonly option: string;
  /** The limits' fields in the relay's isolation limits, and their defaults. */
  readonly perConnection: { readonly field: keyof Limits; readonly default: number };
  readonly perAddress: { readonly field: keyof Limits; readonly default: number };
}

/**
 * A bound of the same kind on a channel whose stream ids upstream may not know (`rest` paths,
 * catalogue filters), whose two options the relay declares itself (config/group-options.ts). An id
 * only a poll can confirm also takes a token of its address group's unconfirmed rate until upstream
 * has answered it.
 */
export interface IdBound<Name extends Channel, Limits>
  extends Pick<GroupBound<Limits>, 'noun' | 'perConnection' | 'perAddress'> {
  readonly channel: Name;
  /** Whether upstream's answer for `id` is unknown until a poll has it. */
  unconfirmed(id: string): boolean;
}

/**
 * The server part of a channel whose state is `State`, whose update carries `Delta` and whose polls
 * emit `EventMap`'s events.
 */
export interface RelayChannel<
  Upstream,
  State,
  Delta,
  EventMap extends EventArgs<EventMap> = Record<never, never>,
  Limits = unknown,
> {
  readonly codec: StreamCodec<State, Delta>;
  /** Absent for a channel polled another way (a book's targets, a price batch). */
  readonly polled?: PolledPerStream<Upstream, unknown, State>;
  /** Present for a channel polled per stream id that delivers each entry once. */
  readonly incremental?: PolledIncrementally<Upstream, State, unknown, unknown, EventMap>;
  /** Present for a channel polled per stream id whose state each poll grows. */
  readonly kept?: (streamId: string) => StreamKeeper<Upstream, State, EventMap>;
  /** Present for a channel served from its market's order book. */
  readonly fromBook?: ServedFromBook<State>;
  /** Present for a channel whose distinct streams are bounded per connection and per address group. */
  readonly groupBound?: GroupBound<Limits>;
  /** Present for a channel that serves history. */
  readonly history?: ServesHistory<Upstream, State, unknown>;
}

/**
 * An operational event of a channel's polls, which the relay's event map takes under its name
 * (relay/events.ts): logged and counted as the channel words it (observability/logs.ts and
 * observability/metrics.ts follow every one).
 */
export interface ChannelEvent {
  /** Its log line: level, `event` field and message; the event's own fields go with them. */
  readonly log: {
    readonly level: 'debug' | 'info' | 'warn';
    readonly event: string;
    readonly message: string;
  };
  /** The counter of them: its name after the relay's prefix, and its help. */
  readonly counter: { readonly name: string; readonly help: string };
}

/** What a channel's events log and count, by event name (`EventMap` gives each one's fields). */
export type ChannelEvents<EventMap> = { readonly [E in keyof EventMap]: ChannelEvent };
