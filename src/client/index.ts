/**
 * @module client
 * `market-relay/client`, the browser-safe entry: `connect(url, options)` opens a self-healing
 * client on the browser's `WebSocket` (or an injected one). No Node imports anywhere below here;
 * Node users get src/client/node.ts through the package's `node` export condition.
 */
import { type ClientOptions, RelayClient } from './relay-client.ts';
import { relaySocketUrl, type WebSocketConstructor, withToken } from './socket.ts';

export interface ConnectOptions extends ClientOptions {
  /** The WebSocket class to use; default `globalThis.WebSocket`. */
  WebSocket?: WebSocketConstructor;
}

/**
 * Connects to a relay (`https://relay.example` or `wss://relay.example/v1/ws`) and keeps
 * reconnecting until `close()`. The API key travels as `?token=` since browsers cannot set headers.
 */
export function connect(url: string, options: ConnectOptions = {}): RelayClient {
  const WebSocketClass = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (WebSocketClass === undefined) {
    throw new TypeError('no global WebSocket in this environment: pass options.WebSocket');
  }
  const socketUrl = withToken(relaySocketUrl(url), options.apiKey);
  return new RelayClient(socketUrl, (target) => new WebSocketClass(target), options);
}

export type { BookState } from '../protocol/book.ts';
export type {
  BookDepth,
  BookSnapshotMessage,
  BookUpdateMessage,
  Level,
  PriceData,
  PriceSnapshotMessage,
  PriceUpdateMessage,
} from '../protocol/messages.ts';
export {
  type BackoffOptions,
  backoffDelay,
  defaultBackoff,
  type RandomSource,
  reconnectDelay,
} from './backoff.ts';
export { type ClientErrorCode, RelayClientError } from './client-error.ts';
export type { ClientEvents, ClientOptions, RelayClient } from './relay-client.ts';
export type { ConnectionStatus } from './relay-connection.ts';
export type { WebSocketConstructor, WebSocketLike } from './socket.ts';
export type {
  BookSubscription,
  PriceSubscription,
  ResyncReason,
  StreamEvents,
  SubscriptionStatus,
} from './stream-subscription.ts';
