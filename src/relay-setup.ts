/**
 * @module relay-setup
 * What `startRelay` (relay-server.ts) reads from its configuration before anything runs: the
 * broker's options with its log lines, the tracing SDK when `--otel-endpoint` asks for it, and the
 * log line of upstream's identity once it is checked.
 */
import type { Logger } from 'pino';
import type { ServeConfig } from './config/config.ts';
import { DEFAULT_SAMPLE_RATIO } from './config/trace-options.ts';
import type { RelayTuning } from './config/tuning.ts';
import type { TracingHandle } from './observability/tracing.ts';
import type { BrokerOptions } from './relay/coordination/start.ts';
import type { UpstreamIdentity } from './relay/poll/upstream-health.ts';

/**
 * The SDK that records and sends traces, loaded only when `--otel-endpoint` is set: a relay without
 * tracing never loads it (docs/operations.md "Traces").
 */
export async function tracingAsked(config: ServeConfig, logger: Logger): Promise<TracingHandle | undefined> {
  if (config.otelEndpoint === undefined) return undefined;
  const { startTracing } = await import('./observability/tracing.ts');
  const sampleRatio = config.otelSampleRatio ?? DEFAULT_SAMPLE_RATIO;
  const handle = startTracing({ endpoint: config.otelEndpoint, sampleRatio, logger });
  // Without user info or query: a receiver's URL may carry a credential.
  const { origin, pathname } = new URL(handle.url);
  logger.info(
    { event: 'tracing_started', url: origin + pathname, sampleRatio },
    `tracing book polls (sample ratio ${sampleRatio}) to ${origin + pathname}`,
  );
  return handle;
}

export function logUpstreamIdentity(logger: Logger, upstreamUrl: string, identity: UpstreamIdentity): void {
  const log = logger.child({ component: 'upstream' });
  if (identity.state === 'mismatch') {
    log.error(
      { event: 'upstream_misconfigured', upstream: upstreamUrl, problem: identity.problem },
      `upstream misconfigured or unreachable: ${upstreamUrl}/health is not upstream's health answer (${identity.problem}); streams stay stale and /health answers 503 until it is`,
    );
  } else if (identity.state === 'verified') {
    log.info({ event: 'upstream_verified', upstream: upstreamUrl }, 'upstream answers as upstream');
  }
}

export function brokerOptions(config: ServeConfig, tuning: RelayTuning, logger: Logger): BrokerOptions {
  const log = logger.child({ component: 'cluster' });
  return {
    redis: config.redis,
    historyLength: tuning.resumeBufferSize,
    historyMs: tuning.historyMs,
    rebalanceMs: tuning.rebalanceMs,
    minLeaseMs: tuning.leaseMs,
    failOpenFraction: config.failOpenRpsFraction ?? 0.5,
    ...(config.redisFormats === undefined ? {} : { formats: config.redisFormats }),
    on: {
      redisError: (error) =>
        log.warn(
          { event: 'redis_error', err: error.message },
          'redis unavailable: polling without coordination',
        ),
      redisRecovered: ({ errors, durationMs }) =>
        log.info({ event: 'redis_recovered', durationMs, errors }, 'redis reachable again: coordinating'),
      unknownFormat: (kind, format) =>
        log.warn(
          { event: 'redis_unknown_format', kind, format: format ?? null },
          `redis: a ${kind} value of a format this relay does not read (a newer relay's?): skipped, and counted in market_relay_redis_unknown_format_total`,
        ),
      budgetError: (error) =>
        log.warn({ event: 'redis_budget_error', err: error.message }, 'cluster budget: redis script failed'),
      joined: ({ connected, instance, redis }, message) =>
        log.info({ event: connected ? 'cluster_joined' : 'cluster_degraded', instance, redis }, message),
    },
  };
}
