/**
 * @module client/node
 * `market-relay/client` under Node: the same API as the browser entry, on the `ws` package by
 * default, and the API key sent as `Authorization: Bearer` (protocol.md "Transport") rather than
 * in the URL, where it would end up in access logs.
 */
import WebSocket from 'ws';
import {
  offeredProtocols,
  type RelayUrls,
  relaySocketUrl,
  relayUrlList,
  withToken,
} from './connection/socket.ts';
import { type ConnectOptions, connectSse } from './index.ts';
import { RelayClient } from './relay-client.ts';

/**
 * `ws` fails a handshake whose response selects no subprotocol when one was offered (browsers
 * accept it as "none"). A relay or proxy that does not select the compact encoding is then asked
 * for plain JSON from the next attempt on, as a browser would have got at once.
 */
const NO_SUBPROTOCOL = 'Server sent no subprotocol';

export * from './index.ts';

/** Connects to a relay; with `options.WebSocket` it behaves exactly as the browser entry. */
export function connect(urls: RelayUrls, options: ConnectOptions = {}): RelayClient {
  const addresses = relayUrlList(urls).map((url) => relaySocketUrl(url));
  let protocols = offeredProtocols(options.encoding);
  const Injected = options.WebSocket;
  if (Injected !== undefined) {
    return new RelayClient(
      addresses.map((address) => withToken(address, options.apiKey)),
      (target) => new Injected(target, protocols),
      options,
    );
  }
  const headers = options.apiKey === undefined ? undefined : { Authorization: `Bearer ${options.apiKey}` };
  if (options.transport === 'sse') return connectSse(urls, options, headers);
  return new RelayClient(
    addresses.map((address) => address.toString()),
    (target) => {
      const socket = new WebSocket(target, protocols, headers === undefined ? {} : { headers });
      socket.once('error', (error) => {
        if (error.message === NO_SUBPROTOCOL) protocols = [];
      });
      return socket;
    },
    options,
  );
}
