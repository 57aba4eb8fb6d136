/**
 * @module client/client-options
 * What the application gives a client (its options) and what it hears from it (its events), apart
 * from each stream's own (client/subscriptions/).
 */
import type { BackoffOptions, RandomSource } from './connection/backoff.ts';
import type { ConnectionStatus } from './connection/relay-connection.ts';
import type { RelayClientError } from './events/client-error.ts';
import type { ClientLogger } from './events/logger.ts';

export interface ClientOptions {
  /** API key for a relay started with API keys (protocol.md "Transport"). */
  apiKey?: string;
  /** The relay's heartbeat interval (ms); default 15 000 as the relay's default. */
  heartbeatMs?: number;
  /** No message for this long means the connection is dead; default 2.5 x heartbeatMs. */
  deadAfterMs?: number;
  backoff?: Partial<BackoffOptions>;
  /** Uniform [0, 1) source for jitter; default Math.random. */
  random?: RandomSource;
  /**
   * Failed connection attempts, with none ever open, after which the client emits an `unreachable`
   * error and `markets()` stops waiting; default 5. It goes on retrying.
   */
  reportUnreachableAfter?: number;
  /**
   * Where the SDK logs a stream that goes stale (`warn`) and is live again (`info`); `console` will
   * do. Default: silent (docs/client.md "Logging").
   */
  logger?: ClientLogger;
}

/** `url`: the relay connected to (`open`), or the one the next attempt goes to (`reconnecting`). */
export interface ClientEvents {
  open: { reconnect: boolean; url: string };
  close: { code: number; reason: string; willReconnect: boolean; meaning: string };
  reconnecting: { attempt: number; delayMs: number; url: string };
  status: { status: ConnectionStatus };
  error: RelayClientError;
}
