/**
 * @module ws/connection-context
 * What the WebSocket endpoint gives each client connection (ws/client-connection.ts): what its
 * session needs (relay/session/session.ts), the shared write coalescer, and the per-connection limits.
 */

import type { SessionContext, SessionLimits } from '../relay/session/session-context.ts';
import type { WriteCoalescer } from './write-coalescer.ts';

export interface ConnectionLimits extends SessionLimits {
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

export interface ConnectionContext extends SessionContext {
  limits: ConnectionLimits;
  coalescer: WriteCoalescer;
}
