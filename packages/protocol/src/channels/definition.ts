/**
 * @module channels/definition
 * What a channel declares of its Node-free part, the part the protocol, the SDK and the status
 * page take as is: its stream-id grammar, how an update applies to its state, how a message's
 * `data` is checked, and the upstream GET it carries whole, if any. Each folder of channels/
 * exports one such definition and ./registry.ts lists them. Here too, named once: the wire's names
 * of stream ids, apart from any channel though two are spelt like one (docs/protocol.md "Client ->
 * relay"): a message names its stream in `market` and a selection its streams in `markets`, or
 * `path` and `paths` on a channel whose ids are paths; a market's UUID is the stream-id kind `market`.
 */
import type { Fields } from '../util/field-checks.ts';
import type { Crc32 } from './checksum.ts';
import type { SinceCheck } from './history.ts';

/** The field a stream message names its stream id in. */
export const STREAM_ID_FIELD = 'market';
/** The field a selection (subscribe, unsubscribe, subscribed ...) lists its stream ids in. */
export const STREAM_IDS_FIELD = 'markets';
/** {@link STREAM_ID_FIELD} on the wire, for a channel whose stream ids are paths. */
export const PATH_FIELD = 'path';
/** {@link STREAM_IDS_FIELD} on the wire, for a channel whose stream ids are paths. */
export const PATHS_FIELD = 'paths';
/** The stream-id kind whose ids are market UUIDs. */
export const MARKET_IDS = 'market';

/**
 * What a channel's stream ids (the `markets` of a subscribe) are: a market UUID, an upstream feed
 * id, the one stream of a channel with one, a catalogue filter, one of upstream's public GET paths,
 * one of a market's several streams (the market and what of it, as its definition spells them).
 */
export type StreamIdKind = typeof MARKET_IDS | 'feed' | 'all' | 'catalogue' | 'path' | 'of-market';

/** A channel's stream ids: of a kind, and (but for `market`, which the protocol checks) their grammar. */
export interface StreamIds {
  kind: StreamIdKind;
  /** An id in its one spelling, or undefined when it is not one of this channel's. */
  canonical?(id: string): string | undefined;
  /** What an id must look like, worded for a `bad_request` message. */
  expected?: string;
  /** What an id names upstream, in "... does not exist upstream" (`market` when absent). */
  noun?: string;
  /** `of-market`: the market an id is of (admission judges the id by it). */
  marketOf?(id: string): string | undefined;
}

/** A message's `data` as read off the wire (an object), with the message's checksum if any. */
export interface WireData {
  data: Fields;
  checksum?: unknown;
}

/** A stream message as read off the wire, before its `data` is known to be of any shape. */
export interface WireMessage {
  data: unknown;
  checksum?: unknown;
  depth?: unknown;
}

/**
 * How a channel's `data` goes in a compact frame when it takes a form of its own there
 * (docs/protocol.md "Compact encoding"); every step exactly reversible.
 */
export interface CompactForm<Data> {
  encode(data: Data): unknown;
  /** The data of a compact frame's `data` element, or what is wrong with it. */
  decode(value: unknown): { ok: true; data: Data } | { ok: false; problem: string };
}

/**
 * What every channel declares of its wire form: what the protocol's generic code (stream keys,
 * compact frames, the SDK's frame checks and subscriptions) asks of a channel. A channel defined
 * in a folder of its own gives it through its `ChannelDefinition`; the others in their folder's
 * `wire.ts`.
 */
export interface ChannelWire {
  readonly streamIds: StreamIds;
  /**
   * Of a channel whose streams are cut to a depth and may be grouped (docs/protocol.md "`book`
   * data", "Grouped books"): its messages, subscriptions and stream keys name both.
   */
  readonly depths?: true;
  /** Of a channel whose every message carries a `checksum` of the state after it. */
  readonly checksummed?: true;
  /** Of a channel whose `data` takes a form of its own in compact frames. */
  readonly compact?: CompactForm<unknown>;
  /** What of a message's `data` (of any JSON shape, not yet checked) is not as docs/protocol.md gives it. */
  dataProblem(message: WireMessage, snapshot: boolean): string | undefined;
}

/** The Node-free part of a channel whose `snapshot` carries `Snapshot` and `update` carries `Update`. */
export interface ChannelDefinition<Snapshot, Update> {
  readonly streamIds: StreamIds;
  /** The state after an update (docs/protocol.md, the channel's section). */
  apply(state: Snapshot, update: Update): Snapshot;
  /**
   * Of a channel whose every message carries a `checksum` of the state after it (the channel's
   * section of docs/protocol.md): that checksum, with the portable CRC-32 unless given another.
   */
  checksum?(state: Snapshot, crc32?: Crc32): number;
  /** What of a message's `data` is not as docs/protocol.md gives it; undefined when it is readable. */
  dataProblem(message: WireData, snapshot: boolean): string | undefined;
  /**
   * The upstream GET, without parameters, whose body the channel carries: one of upstream's public
   * GETs, so also a `rest` path (protocol/rest-paths.ts takes it from ./registry.ts).
   */
  readonly upstreamGet?: string;
  /**
   * Of a channel whose every message is an event rather than a state (each trade once): no
   * subscriber may pace it at an `interval`, which would conflate events away.
   */
  readonly events?: true;
  /**
   * Of a channel that serves history (docs/protocol.md "History since a time"): a subscribe of
   * `streamIds` may ask with `since` for its entries since a time or an entry's id, which this
   * checks at time `now` (the relay on each request, the SDK before sending).
   */
  readonly history?: { check(value: unknown, now: number, streamIds: readonly string[]): SinceCheck };
}

/**
 * How the SDK holds a channel's stream when its state is not the snapshot's data with each update
 * applied (the default): its state and the events it adds to every stream's. Made once per
 * subscription, so it may remember across messages.
 */
export interface HeldStream<Snapshot, Update, State, Events> {
  /** The state a snapshot's data starts. */
  stateOf(snapshot: Snapshot): State;
  /** The state after an update's data. */
  apply(state: State, update: Update): State;
  /** Of a channel whose messages carry a checksum: a held state's, which each message's must equal. */
  checksum?(state: State): number;
  /** A message's data was accepted into `state`: fires the channel's own events, if any. */
  accepted?(data: Snapshot | Update, state: State, emit: EmitOf<Events>): void;
}

/** Fires one of `Events`. */
export type EmitOf<Events> = <E extends keyof Events>(event: E, payload: Events[E]) => void;
