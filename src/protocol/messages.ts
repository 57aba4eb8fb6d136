/**
 * @module protocol/messages
 * The wire protocol, version 1 (docs/protocol.md), declared once: constants and the types of
 * every message. Shared by the relay (src/ws, src/relay) and the client SDK (src/client), so it
 * imports nothing Node-specific, and nothing at run time at all (zod stays in ./requests.ts, which
 * validates client frames against the request types declared here).
 */

export {
  type Channel,
  channels,
  PROBABILITIES_STREAM,
  streamIdKinds,
} from './channels.ts';

import type { Channel } from './channels.ts';

/** Book depths (protocol.md "`book` data"): 10, 50, or null for the full book. */
export const bookDepths = [10, 50] as const;
export type BookDepth = (typeof bookDepths)[number] | null;

export { MAX_MARKETS_PER_REQUEST } from './limits.ts';

// Client -> relay (protocol.md "Client -> relay"). Plain types, so that the client SDK needs no
// zod, not even for its type declarations; ./requests.ts validates frames against them with zod.

export type RequestId = string | number;
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
}
export interface SubscribeRequest extends StreamSelection {
  op: 'subscribe';
  resume?: Record<string, ResumePoint>;
}
export interface UnsubscribeRequest extends StreamSelection {
  op: 'unsubscribe';
}
export interface PingRequest {
  op: 'ping';
  id?: RequestId;
}
export type ClientRequest = SubscribeRequest | UnsubscribeRequest | PingRequest;

// ---------------------------------------------------------------------------------------------
// Relay -> client

/** A price level on the wire: [price, size], both exact decimal strings. */
export type Level = [price: string, size: string];

export interface BookData {
  bids: Level[];
  asks: Level[];
  last_price?: string;
}

/** Price channel data: upstream's decimal strings; in an update, `null` means upstream stopped sending it. */
export const priceFields = ['best_bid', 'best_ask', 'midpoint_price', 'last_price', 'spread'] as const;
export type PriceField = (typeof priceFields)[number];
export type PriceData = Partial<Record<PriceField, string>>;
export type PriceUpdateData = Partial<Record<PriceField, string | null>>;

/**
 * Channels beyond v1's `book` and `price` (docs/protocol.md, one section each). Each keeps
 * upstream's field types: decimal strings stay strings, numbers stay numbers.
 */

/** `trades`: upstream's market activity entries, unchanged. */
export interface TradeEntry {
  activity_id: string;
  activity_type: string;
  price: string;
  size: string;
  total_value: string;
  activity_timestamp: string;
}
/**
 * Snapshot: the most recent entries (docs/protocol.md gives the number), oldest first. Update: the
 * entries new since the previous message, oldest first; each `activity_id` once per stream.
 */
export interface TradesData {
  trades: TradeEntry[];
}

/** A JSON value as upstream sent it (the `market` record's fields keep their upstream types). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** `market` snapshot: upstream's market detail record as received. */
export type MarketData = Record<string, JsonValue>;
/** `market` update: the fields that changed, with their new values; `null` for a field that went away. */
export type MarketUpdateData = Record<string, JsonValue>;

/** `probabilities`: upstream's probability entry for one market (numbers, as upstream sends them). */
export interface ProbabilityEntry {
  midpoint: number;
  best_bid: number;
  best_ask: number;
  last_trade_price: number;
  timestamp: string;
}
/** Snapshot: every market's entry, keyed by market UUID. */
export type ProbabilitiesData = Record<string, ProbabilityEntry>;
/** Update: the entries that changed (whole entry) and, as `null`, the markets that left the map. */
export type ProbabilitiesUpdateData = Record<string, ProbabilityEntry | null>;

/** `markets`: upstream's list-form market record as received, each field with upstream's type. */
export type MarketListRecord = Record<string, JsonValue>;
/** Snapshot: every market of the catalogue (across all its pages), keyed by market UUID. */
export type MarketsData = Record<string, MarketListRecord>;
/** Update: the records new or changed (whole) and, as `null`, the markets that left the catalogue. */
export type MarketsUpdateData = Record<string, MarketListRecord | null>;

/**
 * `rest`: snapshot, upstream's body as served (every field with upstream's type); update, the
 * RFC 6902 JSON Patch from the previous state to the new one. Both carry a `checksum` of the state.
 */
export type RestData = JsonValue;
/** One operation of a `rest` update (the relay never sends `copy` or `test`; ./json-patch.ts applies all six). */
export type PatchOperation =
  | { op: 'add'; path: string; value: JsonValue }
  | { op: 'replace'; path: string; value: JsonValue }
  | { op: 'remove'; path: string }
  | { op: 'move'; from: string; path: string };
export type RestUpdateData = PatchOperation[];

/** `oracle`: one feed's latest parsed price; snapshot and update both carry the whole record. */
export interface OracleData {
  feed_id: string;
  price: number;
  raw_price: string;
  expo: number;
  publish_time: number;
}

/**
 * `candles`: one interval of a market's probability or trade prices (docs/protocol.md "`candles`
 * data"). `start` is the interval's start (ISO 8601 UTC with ms); `final` once the interval has
 * ended and the relay has read upstream since, after which the candle never changes.
 */
interface CandleFields {
  start: string;
  final: boolean;
}
/** Of upstream's probability history: JSON numbers, as upstream serves them. */
export interface ProbabilityCandle extends CandleFields {
  open: number;
  high: number;
  low: number;
  close: number;
}
/** Of trade prints: prices and volume (the sum of sizes) as exact decimal strings, and the trade count. */
export interface TradesCandle extends CandleFields {
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
  trades: number;
}
export type Candle = ProbabilityCandle | TradesCandle;
/** Snapshot: the most recent candles, oldest first. Update: the candles new or changed, oldest first. */
export interface CandlesData {
  candles: Candle[];
}

/** `orders`: one upstream order entry, unchanged. */
export interface OrderEntry {
  id: string;
  price: string;
  size: string;
  token_id: number;
}
export type OrderSide = 'bid' | 'ask';
/** Snapshot: every order of the book, each side in upstream's order. */
export interface OrdersData {
  bids: OrderEntry[];
  asks: OrderEntry[];
}
/** Update: orders new or changed (the whole order and its side), and ids of orders gone. */
export interface OrdersUpdateData {
  upserts: Array<OrderEntry & { side: OrderSide }>;
  removes: string[];
}

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
  /** Upstream snapshot time (or relay receive time where upstream gives none), ISO 8601 with ms. */
  ts: string;
  /** Relay receive time of the upstream response, ISO 8601 with ms. */
  rts: string;
  /** `book` only: 10, 50 or null for the full book. */
  depth?: BookDepth;
}

export interface BookSnapshotMessage extends StreamFields {
  type: 'snapshot';
  channel: 'book';
  depth: BookDepth;
  data: BookData;
  checksum: number;
}
export interface BookUpdateMessage extends StreamFields {
  type: 'update';
  channel: 'book';
  depth: BookDepth;
  data: BookData;
  checksum: number;
}
export type PriceSnapshotMessage = ChannelSnapshotMessage<'price'>;
export type PriceUpdateMessage = ChannelUpdateMessage<'price'>;

/** Each channel's `data`: of a `snapshot` (the whole state) and of an `update` (the change). */
export interface ChannelData {
  book: { snapshot: BookData; update: BookData };
  price: { snapshot: PriceData; update: PriceUpdateData };
  trades: { snapshot: TradesData; update: TradesData };
  market: { snapshot: MarketData; update: MarketUpdateData };
  probabilities: { snapshot: ProbabilitiesData; update: ProbabilitiesUpdateData };
  oracle: { snapshot: OracleData; update: OracleData };
  orders: { snapshot: OrdersData; update: OrdersUpdateData };
  markets: { snapshot: MarketsData; update: MarketsUpdateData };
  rest: { snapshot: RestData; update: RestUpdateData };
  candles: { snapshot: CandlesData; update: CandlesData };
}

/** The channels after `book`: no depth, no checksum (seq alone detects a gap). */
export type PlainChannel = Exclude<Channel, 'book'>;

export interface ChannelSnapshotMessage<C extends PlainChannel> extends StreamFields {
  type: 'snapshot';
  channel: C;
  data: ChannelData[C]['snapshot'];
}
export interface ChannelUpdateMessage<C extends PlainChannel> extends StreamFields {
  type: 'update';
  channel: C;
  data: ChannelData[C]['update'];
}
export type TradesSnapshotMessage = ChannelSnapshotMessage<'trades'>;
export type TradesUpdateMessage = ChannelUpdateMessage<'trades'>;
export type MarketSnapshotMessage = ChannelSnapshotMessage<'market'>;
export type MarketUpdateMessage = ChannelUpdateMessage<'market'>;
export type ProbabilitiesSnapshotMessage = ChannelSnapshotMessage<'probabilities'>;
export type ProbabilitiesUpdateMessage = ChannelUpdateMessage<'probabilities'>;
export type OracleSnapshotMessage = ChannelSnapshotMessage<'oracle'>;
export type OracleUpdateMessage = ChannelUpdateMessage<'oracle'>;
export type OrdersSnapshotMessage = ChannelSnapshotMessage<'orders'>;
export type OrdersUpdateMessage = ChannelUpdateMessage<'orders'>;
export type MarketsSnapshotMessage = ChannelSnapshotMessage<'markets'>;
export type MarketsUpdateMessage = ChannelUpdateMessage<'markets'>;
export interface RestSnapshotMessage extends ChannelSnapshotMessage<'rest'> {
  checksum: number;
}
export interface RestUpdateMessage extends ChannelUpdateMessage<'rest'> {
  checksum: number;
}
export interface CandlesSnapshotMessage extends ChannelSnapshotMessage<'candles'> {
  checksum: number;
}
export interface CandlesUpdateMessage extends ChannelUpdateMessage<'candles'> {
  checksum: number;
}

export type StreamMessage =
  | BookSnapshotMessage
  | BookUpdateMessage
  | PriceSnapshotMessage
  | PriceUpdateMessage
  | TradesSnapshotMessage
  | TradesUpdateMessage
  | MarketSnapshotMessage
  | MarketUpdateMessage
  | ProbabilitiesSnapshotMessage
  | ProbabilitiesUpdateMessage
  | OracleSnapshotMessage
  | OracleUpdateMessage
  | OrdersSnapshotMessage
  | OrdersUpdateMessage
  | MarketsSnapshotMessage
  | MarketsUpdateMessage
  | RestSnapshotMessage
  | RestUpdateMessage
  | CandlesSnapshotMessage
  | CandlesUpdateMessage;

export interface SubscribedMessage {
  type: 'subscribed';
  id?: RequestId;
  channel: Channel;
  markets: string[];
  depth?: BookDepth;
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
  /** Without `id`: markets a `"*"` subscription left because they are no longer active. */
  wildcard?: true;
}
export type StreamState = 'live' | 'stale' | 'closed';
export interface StatusMessage {
  type: 'status';
  channel: Channel;
  market: string;
  depth?: BookDepth;
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

export type ServerMessage =
  | StreamMessage
  | SubscribedMessage
  | UnsubscribedMessage
  | StatusMessage
  | ConfirmedMessage
  | ErrorMessage
  | PongMessage
  | HeartbeatMessage;

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
