/**
 * @module relay/events
 * Observability as named events: the poller, streams and connections emit them; metrics, logs,
 * the status page and tests subscribe. One typed emitter per relay instance (not a process-wide
 * diagnostics channel) so that several relays in one test process stay apart.
 */
import { EventEmitter } from 'node:events';
import type { BookDepth, Channel, StreamState } from '../../packages/protocol/src/protocol/messages.ts';
import type { ChannelEventMap } from './channels/relay-registry.ts';

/** What a poll fetched: one poll kind per channel. */
export type PollKind = Channel;

/**
 * Why the edge turned a connection away (docs/operations.md "Refusals"), the label of
 * `market_relay_connections_refused_total`.
 */
export const refusalReasons = [
  'auth',
  'auth_lockout',
  'origin',
  'rate',
  'address',
  'key',
  'global',
  'pending_address',
  'pending_shed',
] as const;
export type RefusalReason = (typeof refusalReasons)[number];

/** The relay's own events, and those of each channel's polls (channels/relay-registry.ts). */
export interface RelayEventMap extends ChannelEventMap {
  /** One upstream poll finished (a price poll covers up to 100 markets). */
  'poll:done': [
    {
      kind: PollKind;
      markets: number;
      outcome: 'ok' | 'error' | 'not_found';
      durationMs: number;
      error?: Error;
    },
  ];
  /**
   * A poll target was confirmed by upstream; `ageMs` is how old its previous confirmation had grown
   * (what subscribers waited at most), the measure of the maximum age promise.
   */
  'poll:confirmed': [{ kind: PollKind; ageMs: number }];
  /** A stream changed freshness (live / stale / closed). */
  'stream:state': [
    {
      channel: Channel;
      market: string;
      depth?: BookDepth;
      group?: string;
      state: StreamState;
      reason?: string;
    },
  ];
  /** A stream message was fanned out to every subscriber; `sinceReceiptMs` is poll response to last send. */
  'stream:sent': [
    {
      channel: Channel;
      kind: 'snapshot' | 'update';
      subscribers: number;
      bytes: number;
      sinceReceiptMs: number;
    },
  ];
  /** Polled markets or their effective intervals changed. */
  'poll:schedule': [
    { bookMarkets: number; priceMarkets: number; bookIntervalMs: number; priceIntervalMs: number },
  ];
  'connection:open': [{ id: number; remoteAddress: string | undefined }];
  /** `by`: who ended it, the relay (shutdown, limits, errors, missed pings) or the client. */
  'connection:close': [
    { id: number; code: number; by: 'relay' | 'client'; reason: string; durationMs: number },
  ];
  /** A slow connection's held-back streams were each resent as one fresh snapshot. */
  'connection:conflated': [{ id: number; streams: number }];
  'connection:slow-consumer': [{ id: number; bufferedBytes: number }];
  /**
   * The edge turned a connection away (docs/operations.md "Refusals"); `address` is the client's
   * address group. `lockedOut`: this wrong key locked its address out.
   */
  'edge:refused': [{ reason: RefusalReason; address: string; lockedOut?: boolean }];
  /** A client request answered with an error. */
  'request:error': [{ id: number; code: string }];
  /** The relay started to drain (SIGTERM or `POST /drain`): its connections leave over `drainMs`. */
  'relay:draining': [{ drainMs: number; connections: number }];
}

export class RelayEvents extends EventEmitter<RelayEventMap> {}
