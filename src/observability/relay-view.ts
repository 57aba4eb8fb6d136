/**
 * @module observability/relay-view
 * What the operators' view (metrics, logs, the status page) reads of a running relay: the health
 * sources plus the event emitters and the configured poll intervals. A plain interface, so that it
 * can be wired inside `startRelay` before the `Relay` handle exists.
 */

import type { RelayEventMap, RelayEvents } from '../relay/events.ts';
import type { ReplayCounts } from '../relay/session/replay/replays.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import type { HealthSources } from './health-report.ts';

export interface RelayView extends HealthSources {
  events: RelayEvents;
  client: UpstreamClient;
  /** Configured intervals (`--book-poll-ms`, `--price-poll-ms`); the poller reports the effective ones. */
  bookPollMs: number;
  pricePollMs: number;
  /** The replays of the record, counted for the metrics. */
  replays?: ReplayCounts;
  /** Where the log goes, when it counts the lines it dropped (observability/log-sink.ts). */
  logSink?: { readonly droppedLines: number };
}

/** Subscribes to one relay event; returns the matching unsubscribe. */
export function onRelayEvent<E extends keyof RelayEventMap>(
  events: RelayEvents,
  name: E,
  listener: (...args: RelayEventMap[E]) => void,
): () => void {
  // TypeScript cannot resolve EventEmitter's conditional listener type for a generic event name; the
  // signature above already ties the listener to the event.
  events.on(name, listener as never);
  return () => events.off(name, listener as never);
}
