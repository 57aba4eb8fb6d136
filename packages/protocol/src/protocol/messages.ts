/**
 * @module protocol/messages
 * The wire protocol, version 1 (docs/protocol.md), declared once: constants and the types of
 * every message. Shared by the relay (src/ws, src/relay) and the client SDK (packages/client/src), so it
 * imports nothing Node-specific, and nothing at run time at all (zod stays in ./requests.ts, which
 * validates client frames against the request types declared here).
 */

export { type Channel, channels, streamIdKinds } from './channels.ts';

import type { BookDepth } from '../channels/book/wire.ts';
import type { DefinedChannel, DefinedChannelData } from '../channels/registry.ts';
import type { Channel } from './channels.ts';
import type * as History from './history.ts';
import type { RequestId } from './history.ts';

export { type BookDepth, bookDepths } from '../channels/book/wire.ts';
export type * from './history.ts';
export { MAX_INTERVAL_MS, MAX_MARKETS_PER_REQUEST, MIN_INTERVAL_MS } from './limits.ts';
export { isThreshold, thresholdExpected } from './threshold.ts';

// Client -> relay (protocol.md "Client -> relay"). Plain types, so that the client SDK needs no
// zod, not even for its type declarations; ./requests.ts validates frames against them with zod.

export interface ResumePoint {
  epoch: string;
  seq: number;
}
/** The streams a subscribe or unsubscribe names: a channel, its stream ids and (book) depth. */
interface StreamSelection {
  id?: RequestId;
  channel: string;
  markets: string[];
  depth?: BookDepth;
  /** `book`: the price step levels are summed into (docs/protocol.md "Grouped books"). */
  group?: string;
}
export interface SubscribeRequest extends StreamSelection {
  op: 'subscribe';
  /** At most one message per interval (ms) per stream, the latest state (conflated). */
  interval?: number;
  /** `price`: a message only once best bid, best ask or midpoint moved by this much (decimal string). */
  threshold?: string;
  /**
   * The state as it stood at this ISO 8601 time, every recorded message after it, then live
   * (docs/protocol.md "History and replay"); `trades` also takes an `activity_id`.
   */
  since?: string;
  resume?: Record<string, ResumePoint>;
}
export interface UnsubscribeRequest extends StreamSelection {
  op: 'unsubscribe';
}
export interface PingRequest {
  op: 'ping';
  id?: RequestId;
}
/** Moves a held subscription to new options in place (docs/protocol.md "Changing a subscription"). */
export interface UpdateRequest extends Omit<StreamSelection, 'group'> {
  op: 'update';
  /** Which held book depth moves, when the connection holds several of a market. */
  from_depth?: BookDepth;
  /** The new group step (`book`); null: the book ungrouped again. */
  group?: string | null;
  /** Which held book group moves (null: the ungrouped one), when the connection holds several of a market. */
  from_group?: string | null;
  /** The new interval (ms); null: every change again. */
  interval?: number | null;
  /** The new threshold (`price`); null: every move again. */
  threshold?: string | null;
}
/** Asks for the connection's own subscriptions and limits (docs/protocol.md "Listing subscriptions"). */
export interface ListRequest {
  op: 'list';
  id?: RequestId;
}
export type ClientRequest =
  | SubscribeRequest
  | UnsubscribeRequest
  | PingRequest
  | UpdateRequest
  | ListRequest
  | History.ReplayRequest
  | History.ReplayStopRequest;

// ---------------------------------------------------------------------------------------------
// Relay -> client

export type * from '../channels/registry.ts';
export * from './channel-data.ts';

import type {
  BookData,
  MarketData,
  MarketsData,
  MarketsUpdateData,
  MarketUpdateData,
  PriceData,
  PriceUpdateData,
  RestData,
  RestUpdateData,
} from './channel-data.ts';

export interface StreamFields {
  channel: Channel;
  /**
   * The stream id. On the wire, a `rest` message carries it as `path` instead (relay/streams/frame.ts
   * renames it); the SDK gives both.
   */
  market: string;
  /** `rest` only: the canonical path (the same as `market`). */
  path?: string;
  epoch: string;
  seq: number;
  /**
   * A conflated `update` of a paced subscription only: the `seq` of the state it applies to (the
   * subscriber's last message of the stream), when updates in between were folded into it.
   */
  prev_seq?: number;
  /** Upstream snapshot time (or relay receive time where upstream gives none), ISO 8601 with ms. */
  ts: string;
  /** Relay receive time of the upstream response, ISO 8601 with ms. */
  rts: string;
  /** `book` only: 1, 5, 10, 25, 50 or null for the full book. */
  depth?: BookDepth;
  /** A grouped `book` stream only: its group step. */
  group?: string;
  /** A replayed message only: the `id` of the `replay` it belongs to (./history.ts). */
  replay?: RequestId;
}

/**
 * Each channel's `data`: of a `snapshot` (the whole state) and of an `update` (the change), and
 * what else every message of it carries: a `checksum` of the state after it, and, on a channel
 * whose streams are cut to a depth (channels/registry.ts `hasDepths`), its `depth`. A channel
 * with a folder of its own declares its data there (channels/registry.ts).
 */
export interface ChannelData extends DefinedChannelData {
  book: { snapshot: BookData; update: BookData; checksum: number; depth: BookDepth };
  price: { snapshot: PriceData; update: PriceUpdateData };
  market: { snapshot: MarketData; update: MarketUpdateData };
  markets: { snapshot: MarketsData; update: MarketsUpdateData };
  rest: { snapshot: RestData; update: RestUpdateData; checksum: number };
}

/** The fields every message of `C` carries beyond the stream's: its checksum and depth, where it has them. */
type CarriedBy<C extends Channel> = (ChannelData[C] extends { checksum: number }
  ? { checksum: number }
  : unknown) &
  (ChannelData[C] extends { depth: BookDepth } ? { depth: BookDepth } : unknown);

/** A `snapshot` of a stream of `C`: the whole state. */
export type SnapshotMessageOf<C extends Channel> = StreamFields & {
  type: 'snapshot';
  channel: C;
  data: ChannelData[C]['snapshot'];
} & CarriedBy<C>;
/** An `update` of a stream of `C`: the change. */
export type UpdateMessageOf<C extends Channel> = StreamFields & {
  type: 'update';
  channel: C;
  data: ChannelData[C]['update'];
} & CarriedBy<C>;

/** The channels whose streams have no depth (all but a book's). */
export type PlainChannel = {
  [C in Channel]: ChannelData[C] extends { depth: BookDepth } ? never : C;
}[Channel];

export type ChannelSnapshotMessage<C extends PlainChannel> = SnapshotMessageOf<C>;
export type ChannelUpdateMessage<C extends PlainChannel> = UpdateMessageOf<C>;
/** A `snapshot` of a channel with a folder of its own, with its checksum if it carries one. */
export type DefinedSnapshotMessage<C extends DefinedChannel> = SnapshotMessageOf<C>;
export type DefinedUpdateMessage<C extends DefinedChannel> = UpdateMessageOf<C>;

export type StreamMessage = { [C in Channel]: SnapshotMessageOf<C> | UpdateMessageOf<C> }[Channel];

/**
 * The options a subscription is held with, as every `subscribed` names them (docs/protocol.md
 * "Per-subscription options"); an option not in force is absent.
 */
export interface SubscriptionOptions {
  /** `book`: the depth of the stream held (null: the full book). */
  depth?: BookDepth;
  /** `book`: the group step of a grouped stream (docs/protocol.md "Grouped books"). */
  group?: string;
  /** The subscription's `interval` (ms), when it is paced. */
  interval?: number;
  /** The subscription's `threshold`, when it has one. */
  threshold?: string;
}
export interface SubscribedMessage extends SubscriptionOptions {
  type: 'subscribed';
  id?: RequestId;
  channel: Channel;
  markets: string[];
  /**
   * Each market's options, only when the markets named hold different ones (an `update` of
   * several that leaves an option as each had it); the fields above then name those all share.
   */
  options?: Record<string, SubscriptionOptions>;
  /** The subscription's `since`, when it asked for one. */
  since?: string;
  /** With `since`: where the answer starts and whether it reaches back as far as asked. */
  history?: History.HistoryCoverage;
  recovered?: Record<string, boolean>;
  /** Compact connections only (./compact.ts): each market's stream number. */
  streams?: Record<string, number>;
  /**
   * Without `id`: markets a `"*"` subscription of the channel joined as they became active
   * (docs/protocol.md "Wildcard subscriptions").
   */
  wildcard?: true;
}
export interface UnsubscribedMessage {
  type: 'unsubscribed';
  id?: RequestId;
  channel: Channel;
  markets: string[];
  depth?: BookDepth;
  /** A grouped `book` stream: its group step. */
  group?: string;
  /** Without `id`: markets a `"*"` subscription left because they are no longer active. */
  wildcard?: true;
}
export type StreamState = 'live' | 'stale' | 'closed';
export interface StatusMessage {
  type: 'status';
  channel: Channel;
  market: string;
  depth?: BookDepth;
  /** A grouped `book` stream: its group step. */
  group?: string;
  state: StreamState;
  reason?: string;
}
/**
 * Upstream confirmed the stream's state at `seq` unchanged; `confirmed` is the relay's receive time
 * of the newest response that did (protocol.md "`confirmed`").
 */
export interface ConfirmedMessage {
  type: 'confirmed';
  channel: Channel;
  market: string;
  depth?: BookDepth;
  /** A grouped `book` stream: its group step. */
  group?: string;
  epoch: string;
  seq: number;
  confirmed: string;
}
export const errorCodes = [
  'bad_request',
  'unknown_channel',
  'unknown_market',
  'path_not_public',
  'limit_exceeded',
  'out_of_retention',
  'rate_limited',
  'unauthorized',
  'upstream_unavailable',
  'internal',
] as const;
export type ErrorCode = (typeof errorCodes)[number];
export interface ErrorMessage {
  type: 'error';
  id?: RequestId;
  code: ErrorCode;
  message: string;
  channel?: string;
  market?: string;
}
/** One stream a connection holds, or (`market: "*"`) one of its wildcard subscriptions. */
export interface SubscriptionEntry {
  channel: Channel;
  market: string;
  depth?: BookDepth;
  /** A grouped `book` stream: its group step. */
  group?: string;
  /** The position of the last `snapshot` or `update` this connection was sent (null: none yet). */
  epoch: string | null;
  seq: number | null;
  /** The subscription's `interval` (ms), when it has one. */
  interval?: number;
  /** The subscription's `threshold`, when it has one. */
  threshold?: string;
  /** The `since` the subscription asked for, when it asked for one (docs/protocol.md "History and replay"). */
  since?: string;
  /** The stream's freshness, as its `status` messages name it (absent on a wildcard entry). */
  status?: StreamState;
  /** Set on the entry of a `"*"` subscription. */
  wildcard?: true;
}
/** How much of a bound the connection uses. */
export interface LimitUse {
  held: number;
  allowed: number;
}
export interface ConnectionLimits {
  streams: LimitUse;
  /** The request rate (a token bucket): absent where the transport takes no requests. */
  requests?: { available: number; burst: number; per_second: number };
  /** Per-connection bounds of the bounded channels, by channel. */
  channels: Record<string, LimitUse>;
}
export interface SubscriptionsMessage {
  type: 'subscriptions';
  id?: RequestId;
  subscriptions: SubscriptionEntry[];
  limits: ConnectionLimits;
}
export interface PongMessage {
  type: 'pong';
  id?: RequestId;
  ts: string;
}
export interface HeartbeatMessage {
  type: 'heartbeat';
  n: number;
  ts: string;
}
/**
 * The relay is draining (protocol.md "Going away"): reconnect in `reconnect_in_ms` (to another relay
 * of the cluster if there is one) and resume; the relay closes the connection with 1001 about then.
 */
export interface GoingAwayMessage {
  type: 'going_away';
  reconnect_in_ms: number;
}

export type ServerMessage =
  | StreamMessage
  | SubscribedMessage
  | UnsubscribedMessage
  | StatusMessage
  | ConfirmedMessage
  | ErrorMessage
  | PongMessage
  | SubscriptionsMessage
  | HeartbeatMessage
  | GoingAwayMessage
  | History.ReplayGapMessage
  | History.ReplayedMessage;

/** WebSocket close codes the relay sends (protocol.md "Close codes"). */
export const closeCodes = {
  /** Relay shutting down: reconnect elsewhere. */
  goingAway: 1001,
  /** A frame that breaks the WebSocket protocol (sent by the ws library). */
  protocolError: 1002,
  /** A text frame that is not valid UTF-8 (sent by the ws library). */
  invalidPayload: 1007,
  /** Policy violation: authentication failed. */
  policy: 1008,
  /** A client frame larger than the relay accepts. */
  frameTooLarge: 1009,
  /** The connection stayed above the hard send-buffer limit for too long. */
  slowConsumer: 4008,
  /** The relay is at its connection limit, or this address's or API key's. */
  tooManyConnections: 4029,
  /** The connection kept sending over its request rate (protocol.md "Limits"). */
  requestFlood: 4429,
} as const;
