/**
 * @module config/trace-options
 * The options of OpenTelemetry tracing (docs/operations.md "Traces"), declared like every other
 * option of `serve` (./config.ts reads them): off unless an OTLP/HTTP endpoint is given.
 */
import { z } from 'zod';
import type { OptionSpec } from './option-spec.ts';

/**
 * One book poll in a hundred: at the default `--book-poll-ms` a relay polling 1,000 books sends 10
 * traces a second, enough to see where a late update spent its time without a collector sized for
 * every poll, for about 2.6 µs of CPU a poll, under 1 % of a changed book poll's (docs/operations.md
 * "Traces").
 */
export const DEFAULT_SAMPLE_RATIO = 0.01;

export const traceOptions = {
  'otel-endpoint': {
    env: 'OTEL_ENDPOINT',
    doc: 'set = book polls are traced (OpenTelemetry) and the spans sent to this OTLP/HTTP receiver: a base URL (`/v1/traces` is added) or the full traces URL ([Traces](#traces))',
    schema: z.url({ protocol: /^https?$/ }),
    default: undefined,
    expected: 'an http(s) URL such as http://127.0.0.1:4318',
    quote: 'url',
    placeholder: 'URL',
    help: 'set = trace book polls (OpenTelemetry) to this OTLP/HTTP receiver, e.g. a collector',
  },
  'otel-sample-ratio': {
    env: 'OTEL_SAMPLE_RATIO',
    doc: 'the share of book polls traced, decided at the poll: each trace has every span of its poll, none of the others',
    schema: z
      .string()
      .trim()
      .regex(/^\d*\.?\d+$/)
      .transform(Number)
      .pipe(z.number().min(0).max(1)),
    default: String(DEFAULT_SAMPLE_RATIO),
    expected: 'a number from 0 to 1, such as 0.01',
    placeholder: 'F',
    help: 'the share of book polls traced with --otel-endpoint (0..1)',
  },
} satisfies Record<string, OptionSpec>;
