/**
 * @module client
 * `market-relay/client`, the browser-safe entry: `connect(url, options)` opens a self-healing
 * client on the browser's `WebSocket` (or an injected one). No Node imports anywhere below here;
 * Node users get packages/client/src/node.ts through the package's `node` export condition.
 */

import {
  offeredProtocols,
  type RelayUrls,
  relaySocketUrl,
  relaySseUrl,
  relayUrlList,
  type WebSocketConstructor,
  withToken,
} from './connection/socket.ts';
import { type FetchLike, SseSocket } from './connection/sse-socket.ts';
import { type ClientOptions, RelayClient } from './relay-client.ts';

export interface ConnectOptions extends ClientOptions {
  /** The WebSocket class to use; default `globalThis.WebSocket`. */
  WebSocket?: WebSocketConstructor;
  /**
   * `websocket` (default where a WebSocket exists) or `sse`: Server-Sent Events over `fetch`, for
   * where WebSockets are blocked (docs/client.md "Without WebSocket"); the default when there is
   * no WebSocket at all.
   */
  transport?: 'websocket' | 'sse';
  /**
   * WebSocket only: `compact` (default) offers the `market-relay.compact.1` subprotocol, under half
   * the bytes of JSON on book streams, about a quarter with compression (docs/client.md "Encoding");
   * `json` asks for plain JSON. Messages reach the application as the same objects either way; a
   * relay that does not select the subprotocol sends JSON, which is read as usual. SSE is JSON.
   */
  encoding?: 'compact' | 'json';
}

/** The SSE transport on the global `fetch`, the key in `headers` or, failing that, in `?token=`. */
export function connectSse(
  urls: RelayUrls,
  options: ConnectOptions,
  headers: Record<string, string> = {},
): RelayClient {
  // Called as a plain function: browsers refuse a `fetch` called with another `this`.
  const fetchImpl: FetchLike = (target, init) => globalThis.fetch(target, init);
  const targets = relayUrlList(urls).map((url) =>
    headers.Authorization === undefined
      ? withToken(relaySseUrl(url), options.apiKey)
      : relaySseUrl(url).toString(),
  );
  return new RelayClient(targets, (address) => new SseSocket(address, fetchImpl, headers), options, 'sse');
}

/**
 * Connects to a relay (`https://relay.example` or `wss://relay.example/v1/ws`), or to the first of
 * several relays of one cluster and, whenever the connection is lost, to the next one, and keeps
 * reconnecting until `close()`. The API key travels as `?token=` since browsers cannot set headers.
 */
export function connect(urls: RelayUrls, options: ConnectOptions = {}): RelayClient {
  const WebSocketClass = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (options.transport === 'sse' || WebSocketClass === undefined) return connectSse(urls, options);
  const targets = relayUrlList(urls).map((url) => withToken(relaySocketUrl(url), options.apiKey));
  const protocols = offeredProtocols(options.encoding);
  return new RelayClient(targets, (target) => new WebSocketClass(target, protocols), options);
}

export { canonicalJson } from '../../protocol/src/channels/checksum.ts';
export {
  type CandleInterval,
  type CandleSource,
  candleIntervals,
  candleSources,
  candlesStreamId,
  orderListsOf,
} from '../../protocol/src/channels/registry.ts';
export type { BookState } from '../../protocol/src/protocol/book.ts';
export type {
  CatalogueFilter,
  CatalogueStatus,
  WildcardChannel,
} from '../../protocol/src/protocol/channels.ts';
export { type BookGroup, bookGroups } from '../../protocol/src/protocol/group.ts';
export type {
  HistoryCoverage,
  ReplayedMessage,
  ReplayGapMessage,
  ReplaySpeed,
} from '../../protocol/src/protocol/history.ts';
export {
  applyPatch,
  type PatchOperation,
  type PatchOperationIn,
  restChecksum,
} from '../../protocol/src/protocol/json-patch.ts';
/** What `RelayClient.subscriptions()` answers. */
export type {
  BookDepth,
  Candle,
  CandlesData,
  ConfirmedMessage,
  ConnectionLimits,
  JsonValue,
  Level,
  LimitUse,
  MarketData,
  MarketListRecord,
  MarketsData,
  MarketsUpdateData,
  MarketUpdateData,
  PriceData,
  ProbabilityCandle,
  RestData,
  RestUpdateData,
  SubscriptionEntry,
  SubscriptionsMessage,
  TradesCandle,
} from '../../protocol/src/protocol/messages.ts';
export {
  type CanonicalRestPath,
  canonicalRestPath,
  type RestPathResult,
} from '../../protocol/src/protocol/rest-paths.ts';
export type * from './channel-streams.ts';
export {
  type BackoffOptions,
  backoffDelay,
  defaultBackoff,
  type RandomSource,
  reconnectDelay,
} from './connection/backoff.ts';
export type { ConnectionStatus } from './connection/relay-connection.ts';
export type { RelayUrls, WebSocketConstructor, WebSocketLike } from './connection/socket.ts';
export { type ClientErrorCode, RelayClientError } from './events/client-error.ts';
export type { ClientLogger } from './events/logger.ts';
export type { HistoryFetch, HistoryOptions } from './history/export-reader.ts';
export type { Replay, ReplayItem } from './history/replay.ts';
export type { ReplayedStreamOf, ReplayedStreams } from './history/replayed-streams.ts';
export type { ReplayOptions } from './history/replays.ts';
export type * from './relay-client.ts';
export type { AnyStreamSubscription } from './subscriptions/channel-subscriptions.ts';
export type {
  BookSnapshotMessage,
  BookSubscription,
  BookUpdateMessage,
} from './subscriptions/channels/book/subscription.ts';
export type {
  MarketEvents,
  MarketSnapshotMessage,
  MarketSubscription,
  MarketUpdateMessage,
} from './subscriptions/channels/market/subscription.ts';
export type {
  MarketsSnapshotMessage,
  MarketsSubscription,
  MarketsUpdateMessage,
} from './subscriptions/channels/markets/subscription.ts';
export type {
  PriceSnapshotMessage,
  PriceSubscription,
  PriceUpdateMessage,
} from './subscriptions/channels/price/subscription.ts';
export type {
  RestSnapshotMessage,
  RestSubscription,
  RestUpdateMessage,
} from './subscriptions/channels/rest/subscription.ts';
export type { ResyncReason, StreamEvents, SubscriptionStatus } from './subscriptions/stream-subscription.ts';
export type {
  WildcardEvents,
  WildcardStreams,
  WildcardSubscription,
} from './subscriptions/wildcard-subscription.ts';
