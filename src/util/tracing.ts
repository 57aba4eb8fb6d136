/**
 * @module util/tracing
 * The spans of one book poll, from its upstream request to the socket writes of its fan-out
 * (docs/operations.md "Traces"), through the one small interface every layer on that path uses.
 * Only `@opentelemetry/api` here: the SDK that samples, records and exports spans is loaded by
 * observability/tracing.ts, and only when `--otel-endpoint` is set. A relay without it has no
 * `Tracing`, so a poll's span is `undefined` and each step on the path costs one comparison. A poll
 * the sampler leaves out has none either: the decision is taken once, at the poll (its root span),
 * and nothing is made for the steps after it. The span is handed down explicitly, never through an
 * async context: the context manager that follows promises would cost every poll, traced or not.
 */
import {
  type Attributes,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
  type Tracer,
  trace,
} from '@opentelemetry/api';

/** What an SDK gives the relay to trace with (observability/tracing.ts makes one). */
export interface Tracing {
  readonly tracer: Tracer;
  /**
   * The share of polls traced (0..1), decided here at each poll before the SDK is asked: a poll left
   * out costs one random number, where asking the SDK costs it a trace id, a sampler and a
   * non-recording span. The SDK's own sampler then keeps every root it is given and every child of one.
   */
  readonly sampleRatio: number;
  /** Writes a span's context into the headers of a request it makes (W3C `traceparent`). */
  readonly propagator: TextMapPropagator;
}

/** A root span's options, the same object for every poll: most polls are not sampled. */
const ROOT_OPTIONS = { root: true } as const;

/** One recorded span of a sampled trace; its children are made from it. */
export class TraceSpan {
  readonly #tracing: Tracing;
  readonly #span: Span;

  private constructor(tracing: Tracing, span: Span) {
    this.#tracing = tracing;
    this.#span = span;
  }

  /**
   * A new trace's first span, or undefined: this trace is left out (`sampleRatio`). It takes a
   * Tracing, not an optional one: with tracing off the caller compares and does not call, so an
   * untraced relay runs nothing of this module per poll.
   */
  static root(tracing: Tracing, name: string): TraceSpan | undefined {
    // Math.random is enough for a share of polls: a poll's trace is a root of its own, so no other
    // service has to come to the same decision from its trace id.
    if (Math.random() >= tracing.sampleRatio) return undefined;
    const span = tracing.tracer.startSpan(name, ROOT_OPTIONS);
    return span.isRecording() ? new TraceSpan(tracing, span) : undefined;
  }

  /** A span inside this one (`client`: a request to another service). */
  child(name: string, attributes?: Attributes, kind: 'internal' | 'client' = 'internal'): TraceSpan {
    const span = this.#tracing.tracer.startSpan(
      name,
      { attributes, kind: kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL },
      trace.setSpan(ROOT_CONTEXT, this.#span),
    );
    return new TraceSpan(this.#tracing, span);
  }

  set(attributes: Attributes): void {
    this.#span.setAttributes(attributes);
  }

  /** The span failed: `error` is recorded on it, its status is an error. */
  fail(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof Error) this.#span.recordException(error);
    this.#span.setStatus({ code: SpanStatusCode.ERROR, message });
  }

  /** `headers` with this span's context added, for the server the request goes to (W3C trace context). */
  withContext(headers: Readonly<Record<string, string>>): Record<string, string> {
    const carrier = { ...headers };
    this.#tracing.propagator.inject(trace.setSpan(ROOT_CONTEXT, this.#span), carrier, defaultTextMapSetter);
    return carrier;
  }

  end(): void {
    this.#span.end();
  }

  /**
   * Ends the span once the writes of this event-loop turn are made: the relay-wide end-of-turn
   * flush (ws/write-coalescer.ts) was scheduled when the first frame of the turn was queued, before
   * this, and immediates run in the order they were scheduled. A busy connection's frames held for
   * its window leave after the span.
   */
  endAfterTurn(): void {
    setImmediate(() => this.#span.end());
  }
}
