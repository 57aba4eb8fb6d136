/**
 * @module observability/tracing
 * `--otel-endpoint`: the OpenTelemetry SDK that samples the relay's traces (util/tracing.ts), records
 * them and sends them in batches to an OTLP/HTTP receiver, a collector as a rule (docs/operations.md
 * "Traces"). The server imports this module only when the endpoint is set, so a relay without
 * tracing never loads the SDK. Sampling is decided once per book poll, at its root span, by
 * `--otel-sample-ratio` (util/tracing.ts `TraceSpan.root`; every span of a sampled poll is kept).
 */
import { type DiagLogger, DiagLogLevel, diag } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Logger } from 'pino';
import type { Tracing } from '../util/tracing.ts';
import { version } from '../util/version.ts';

export interface TracingOptions {
  /** The receiver's base URL (`/v1/traces` is added), or its full traces URL. */
  endpoint: string;
  /** The share of book polls traced, 0..1. */
  sampleRatio: number;
  logger: Logger;
}

export interface TracingHandle {
  readonly tracing: Tracing;
  /** The URL the spans are sent to. */
  readonly url: string;
  /** Sends the spans still waiting, then stops. */
  shutdown(): Promise<void>;
}

/** The longest a relay's shutdown waits for its last spans to be sent. */
const SHUTDOWN_MS = 1_000;
/** A failing receiver is logged this often at most: every batch would fail alike. */
const EXPORT_ERROR_LOG_MS = 60_000;

export function startTracing(options: TracingOptions): TracingHandle {
  const url = tracesUrl(options.endpoint);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: 'market-relay',
      [ATTR_SERVICE_VERSION]: version,
    }),
    // The relay decides which polls are traced (util/tracing.ts `TraceSpan.root`) before it starts a
    // root: every root it starts is kept, and every span inside one.
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  // The exporter reports a failed send through the SDK's diagnostics, not to its caller.
  diag.setLogger(exportErrorLog(options.logger.child({ component: 'tracing' }), url), DiagLogLevel.ERROR);
  return {
    tracing: {
      tracer: provider.getTracer('market-relay', version),
      sampleRatio: options.sampleRatio,
      propagator: new W3CTraceContextPropagator(),
    },
    url,
    shutdown: async () => {
      // The spans still waiting are sent, but a receiver that does not answer may not hold the
      // relay's exit (SIGTERM: exit within 5 s): what it has not taken by then is dropped.
      const timer = new Promise<void>((resolve) => setTimeout(resolve, SHUTDOWN_MS).unref());
      await Promise.race([provider.shutdown().catch(() => {}), timer]);
      diag.disable();
    },
  };
}

/**
 * A base URL (no path, as OTLP's `OTEL_EXPORTER_OTLP_ENDPOINT`) gets the traces path; a URL with a
 * path is the traces URL itself (as `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`).
 */
export function tracesUrl(endpoint: string): string {
  const url = new URL(endpoint);
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/v1/traces';
  return url.toString();
}

/** The SDK's errors as the relay's log lines, one a minute at most. */
function exportErrorLog(logger: Logger, url: string): DiagLogger {
  const { origin, pathname } = new URL(url);
  // Without user info or query: a receiver's URL may carry a credential.
  const shown = origin + pathname;
  let loggedAt = Number.NEGATIVE_INFINITY;
  const error = (message: string, ...args: unknown[]): void => {
    const now = Date.now();
    if (now - loggedAt < EXPORT_ERROR_LOG_MS) return;
    loggedAt = now;
    logger.warn(
      { event: 'otel_export_error', url: shown, detail: [message, ...args.map(String)].join(' ') },
      `traces could not be sent to ${shown} (logged once a minute at most)`,
    );
  };
  const ignore = (): void => {};
  return { error, warn: ignore, info: ignore, debug: ignore, verbose: ignore };
}
