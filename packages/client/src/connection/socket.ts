/**
 * @module client/connection/socket
 * The little of the WebSocket API the SDK uses, satisfied by the browser's `WebSocket`, Node's global
 * one and the `ws` package alike; plus the relay URL and the reading of a failed handshake.
 */
import { COMPACT_SUBPROTOCOL } from '../../../protocol/src/protocol/compact.ts';

/**
 * The event handler properties are typed with `never` parameters so that each implementation's own
 * event types fit; the SDK reads events through the narrow shapes in this module.
 */
export interface WebSocketLike {
  readonly readyState: number;
  onopen: ((event: never) => void) | null;
  onmessage: ((event: never) => void) | null;
  onclose: ((event: never) => void) | null;
  onerror: ((event: never) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

/**
 * A WebSocket class such as `globalThis.WebSocket` or the `ws` package's default export; `protocols`
 * are the subprotocols offered (`Sec-WebSocket-Protocol`).
 */
export type WebSocketConstructor = new (url: string, protocols?: string[]) => WebSocketLike;

/** The subprotocols a WebSocket offers for an encoding (protocol.md "Compact encoding"); compact by default. */
export function offeredProtocols(encoding: 'compact' | 'json' | undefined): string[] {
  return encoding === 'json' ? [] : [COMPACT_SUBPROTOCOL];
}

/** Opens one socket to an already complete URL (the entry points decide how the API key travels). */
export type SocketFactory = (url: string) => WebSocketLike;

export interface MessageEventLike {
  data: unknown;
}
export interface CloseEventLike {
  code: number;
  reason: string;
}
export interface ErrorEventLike {
  message?: unknown;
  error?: unknown;
}

/** `readyState` of an open socket in every implementation (WHATWG WebSocket `OPEN`). */
export const OPEN = 1;
export const CLOSED = 3;

/** One relay's URL, or the URLs of several relays of one cluster, tried in turn. */
export type RelayUrls = string | readonly string[];

/** The URLs of `connect` as a list; an empty one is a programming error, thrown at once. */
export function relayUrlList(urls: RelayUrls): readonly string[] {
  const list = typeof urls === 'string' ? [urls] : urls;
  if (list.length === 0) throw new TypeError('connect needs at least one relay URL');
  return list;
}

/**
 * The WebSocket URL of a relay: `http(s)://host:port` or `ws(s)://host:port` gets the `/v1/ws`
 * path of protocol.md "Transport"; a URL with another path is used as given.
 */
export function relaySocketUrl(url: string): URL {
  const parsed = new URL(url);
  if (parsed.protocol === 'http:') parsed.protocol = 'ws:';
  else if (parsed.protocol === 'https:') parsed.protocol = 'wss:';
  if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') {
    throw new TypeError(`relay URL must be http(s) or ws(s), got ${url}`);
  }
  if (parsed.pathname === '/' || parsed.pathname === '') parsed.pathname = '/v1/ws';
  return parsed;
}

/** The SSE URL of a relay (protocol.md "Server-Sent Events"): `/v1/sse` on its HTTP origin. */
export function relaySseUrl(url: string): URL {
  const parsed = relaySocketUrl(url);
  parsed.protocol = parsed.protocol === 'wss:' ? 'https:' : 'http:';
  if (parsed.pathname === '/v1/ws') parsed.pathname = '/v1/sse';
  return parsed;
}

/** Browsers cannot set headers on a WebSocket upgrade, so the key goes in `?token=` (protocol.md "Transport"). */
export function withToken(url: URL, apiKey: string | undefined): string {
  if (apiKey === undefined) return url.toString();
  const copy = new URL(url);
  copy.searchParams.set('token', apiKey);
  return copy.toString();
}

/** A readable description of a socket `error` event (browsers give none; `ws` gives the cause). */
export function describeSocketError(event: ErrorEventLike): string {
  if (event.error instanceof Error) return event.error.message;
  if (typeof event.message === 'string' && event.message !== '') return event.message;
  return 'WebSocket error';
}

/**
 * The HTTP status of a refused upgrade when the implementation reports it (`ws`: "Unexpected server
 * response: 401"); browsers hide it. 401/403 mean the API key or origin was refused (protocol.md
 * "Transport"): retrying cannot help.
 */
export function refusedUpgradeStatus(description: string): number | undefined {
  const match = /Unexpected server response: (\d{3})/.exec(description);
  return match === null ? undefined : Number(match[1]);
}
