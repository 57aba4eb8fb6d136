/**
 * @module relay/session/session-context
 * What a transport gives each session it creates (relay/session/session.ts): the relay's registry,
 * market admission, events and limits, and the connection's own options.
 */
import type { MarketAdmission } from '../admission/market.ts';
import type { RelayEvents } from '../events.ts';
import type { StreamRegistry } from '../streams/registry.ts';
import type { SlowReaderLimits } from '../streams/slow-consumer.ts';

export interface SessionLimits extends SlowReaderLimits {
  /** Streams one session may hold at once. */
  maxStreams: number;
}

export interface SessionContext {
  registry: StreamRegistry;
  /** Which new markets a subscription may add (isolation limits, unknown ids). */
  marketAdmission: MarketAdmission;
  events: RelayEvents;
  limits: SessionLimits;
}

export interface SessionOptions {
  /** The API key the client presented, when the relay requires keys (isolation limits per key). */
  apiKey?: string | undefined;
  /** The client's address group (relay/admission/client-address.ts): the per-address limits and its share of the upstream budget. */
  addressGroup?: string | undefined;
  /** `compact`: `subscribed` names each stream's number (docs/protocol.md "Compact encoding"). */
  encoding?: 'json' | 'compact';
  /** Called once when the session is closed: what the transport's admission counted is released. */
  onClose?: () => void;
}
