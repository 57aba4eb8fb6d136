/**
 * @module ws/connection-context
 * What the WebSocket endpoint gives each client connection (ws/client-connection.ts): the relay's
 * registry, market admission and events, the shared write coalescer, and the per-connection limits.
 */

import type { MarketAdmission } from '../relay/admission/market.ts';
import type { RelayEvents } from '../relay/events.ts';
import type { StreamRegistry } from '../relay/streams/registry.ts';
import type { SlowReaderLimits } from '../relay/streams/slow-consumer.ts';
import type { WriteCoalescer } from './write-coalescer.ts';

export interface ConnectionLimits extends SlowReaderLimits {
  /** Streams one connection may hold at once. */
  maxStreams: number;
  /** Client requests per second, with a burst allowance. */
  requestsPerSecond: number;
  requestBurst: number;
  /** How long a connection may keep sending over its request rate before it is closed with 4429. */
  floodCloseAfterMs: number;
  /** After a close for a limit, how long the client has to read up to the close frame. */
  closeGraceMs: number;
  /** The same after a slow-consumer close (4008): the client stopped reading, so it may take long. */
  slowConsumerLingerMs: number;
}

export interface ConnectionContext {
  registry: StreamRegistry;
  /** Which new markets a subscription may add (isolation limits, unknown ids). */
  marketAdmission: MarketAdmission;
  events: RelayEvents;
  limits: ConnectionLimits;
  coalescer: WriteCoalescer;
}
