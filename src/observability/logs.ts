/**
 * @module observability/logs
 * The relay's operational log: one pino JSON line per notable event (client connect / close with its
 * code, upstream failures with endpoint and status, stream stale / live / closed, slow-consumer
 * closes, poll intervals stretched or restored, each channel's poll events as it words them), never
 * a line per message sent. Everything comes from RelayEvents and the upstream client's request
 * events, subscribed here and nowhere else.
 */
import type { Logger } from 'pino';
import { type ChannelEventMap, channelEvents } from '../relay/channels/relay-registry.ts';
import type { RelayEvents } from '../relay/events.ts';
import type { UpstreamClient, UpstreamRequestEvent } from '../upstream/client.ts';
import { onRelayEvent } from './relay-view.ts';

export interface LogSources {
  events: RelayEvents;
  client: UpstreamClient;
  /** Clock in ms, default Date.now. */
  now?: () => number;
}

/**
 * While an upstream endpoint keeps failing in the same way, one line per this many ms says so (with
 * how many failures it stands for), so an upstream outage is visible without flooding the log.
 */
export const REPEAT_LOG_MS = 10_000;

interface FailureRun {
  lastLoggedAt: number;
  unlogged: number;
  failures: number;
}

/** Starts logging; returns the function that stops it. */
export function subscribeLogs(logger: Logger, sources: LogSources): () => void {
  const now = sources.now ?? Date.now;
  const log = logger.child({ component: 'relay' });
  const { events } = sources;
  let intervals: { book: number; price: number } | undefined;

  const unsubscribers = [
    onRelayEvent(events, 'connection:open', ({ id, remoteAddress }) =>
      log.info({ event: 'client_connected', connection: id, remoteAddress }, 'client connected'),
    ),
    onRelayEvent(events, 'connection:close', ({ id, code, by, reason, durationMs }) =>
      log.info(
        { event: 'client_closed', connection: id, code, by, reason, durationMs },
        `client disconnected (${code}, closed by ${by})`,
      ),
    ),
    onRelayEvent(events, 'connection:slow-consumer', ({ id, bufferedBytes }) =>
      log.warn(
        { event: 'slow_consumer', connection: id, bufferedBytes },
        'closing a slow consumer with 4008',
      ),
    ),
    onRelayEvent(events, 'connection:conflated', ({ id, streams }) =>
      log.debug({ event: 'conflated', connection: id, streams }, 'slow client drained; snapshots resent'),
    ),
    ...(Object.keys(channelEvents) as Array<keyof ChannelEventMap>).map((name) => {
      const { level, event, message } = channelEvents[name].log;
      return onRelayEvent(events, name, (fields) => log[level]({ event, ...fields }, message));
    }),
    onRelayEvent(events, 'request:error', ({ id, code }) =>
      log.debug({ event: 'request_error', connection: id, code }, 'client request refused'),
    ),
    onRelayEvent(events, 'stream:state', ({ channel, market, depth, group, state, reason }) => {
      const fields = {
        event: `stream_${state}`,
        channel,
        market,
        ...(depth === undefined ? {} : { depth }),
        ...(group === undefined ? {} : { group }),
        reason,
      };
      if (state === 'stale') log.warn(fields, 'stream stale: upstream polls failing');
      else if (state === 'live') log.info(fields, 'stream live again');
      else log.info(fields, 'stream closed: market gone upstream');
    }),
    onRelayEvent(
      events,
      'poll:schedule',
      ({ bookMarkets, priceMarkets, bookIntervalMs, priceIntervalMs }) => {
        const changed = intervals?.book !== bookIntervalMs || intervals?.price !== priceIntervalMs;
        const first = intervals === undefined;
        intervals = { book: bookIntervalMs, price: priceIntervalMs };
        if (changed && !first) {
          log.info(
            { event: 'poll_intervals', bookMarkets, priceMarkets, bookIntervalMs, priceIntervalMs },
            'effective poll intervals changed',
          );
        }
      },
    ),
  ];

  // One line per burst of refusals of one reason: the first at once, then one per REPEAT_LOG_MS
  // saying how many it stands for.
  const refusals = new Map<string, { lastLoggedAt: number; unlogged: number }>();
  unsubscribers.push(
    onRelayEvent(events, 'edge:refused', ({ reason, address, lockedOut }) => {
      if (lockedOut) {
        log.warn(
          { event: 'auth_lockout', address },
          'an address locked out after repeated wrong API keys: its attempts get 429 for a while',
        );
      }
      const at = now();
      const run = refusals.get(reason);
      if (run !== undefined && at - run.lastLoggedAt < REPEAT_LOG_MS) {
        run.unlogged += 1;
        return;
      }
      refusals.set(reason, { lastLoggedAt: at, unlogged: 0 });
      log.warn(
        {
          event: 'connections_refused',
          reason,
          address,
          ...(run === undefined || run.unlogged === 0 ? {} : { suppressed: run.unlogged }),
        },
        `connection refused at the edge: ${reason}`,
      );
    }),
  );

  const runs = new Map<string, FailureRun>();
  const onRequest = ({ endpoint, outcome, status, attempt, durationMs }: UpstreamRequestEvent) => {
    const ok = outcome === 'ok' || (outcome === 'http_error' && status === 404);
    if (ok) {
      const run = runs.get(endpoint);
      if (run === undefined) return;
      runs.delete(endpoint);
      log.info(
        { event: 'upstream_recovered', endpoint, failures: run.failures },
        'upstream endpoint answering again',
      );
      return;
    }
    const at = now();
    let run = runs.get(endpoint);
    if (run !== undefined && at - run.lastLoggedAt < REPEAT_LOG_MS) {
      run.unlogged += 1;
      run.failures += 1;
      return;
    }
    const repeated = run?.unlogged ?? 0;
    run = { lastLoggedAt: at, unlogged: 0, failures: (run?.failures ?? 0) + 1 };
    runs.set(endpoint, run);
    log.warn(
      {
        event: 'upstream_failure',
        endpoint,
        outcome,
        ...(status === undefined ? {} : { status }),
        attempt,
        durationMs,
        ...(repeated > 0 ? { suppressed: repeated } : {}),
      },
      `upstream ${endpoint} failed: ${outcome}${status === undefined ? '' : ` ${status}`}`,
    );
  };
  sources.client.events.on('request', onRequest);

  return () => {
    for (const unsubscribe of unsubscribers) unsubscribe();
    sources.client.events.off('request', onRequest);
  };
}
