/**
 * @module client/node
 * `market-relay/client` under Node: the same API as the browser entry, on the `ws` package by
 * default, and the API key sent as `Authorization: Bearer` (protocol.md "Transport") rather than
 * in the URL, where it would end up in access logs.
 */
import WebSocket from 'ws';
import type { ConnectOptions } from './index.ts';
import { RelayClient } from './relay-client.ts';
import { relaySocketUrl, withToken } from './socket.ts';

export * from './index.ts';

/** Connects to a relay; with `options.WebSocket` it behaves exactly as the browser entry. */
export function connect(url: string, options: ConnectOptions = {}): RelayClient {
  const address = relaySocketUrl(url);
  const Injected = options.WebSocket;
  if (Injected !== undefined) {
    return new RelayClient(withToken(address, options.apiKey), (target) => new Injected(target), options);
  }
  const headers = options.apiKey === undefined ? undefined : { Authorization: `Bearer ${options.apiKey}` };
  return new RelayClient(
    address.toString(),
    (target) => new WebSocket(target, headers === undefined ? {} : { headers }),
    options,
  );
}
