/**
 * util/tracing.ts: the relay decides which polls are traced before it asks the SDK, so a poll left
 * out never reaches the SDK (docs/operations.md "Traces").
 */
import { type Tracer, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { describe, expect, it } from 'vitest';
import { TraceSpan } from '../../src/util/tracing.ts';

/** A tracer whose spans record (as the SDK's do for a root it keeps), counting the roots asked. */
function countingTracer(): { tracer: Tracer; started: () => number } {
  let started = 0;
  const noop = trace.getTracer('noop');
  const tracer: Tracer = {
    startSpan: (...args) => {
      started += 1;
      const span = noop.startSpan(...args);
      span.isRecording = () => true;
      return span;
    },
    startActiveSpan: noop.startActiveSpan.bind(noop),
  };
  return { tracer, started: () => started };
}

describe('TraceSpan.root', () => {
  it('asks the SDK only for the polls it traces, about the ratio of them', () => {
    const { tracer, started } = countingTracer();
    const tracing = { tracer, sampleRatio: 0.25, propagator: new W3CTraceContextPropagator() };
    const polls = 4_000;
    let traced = 0;
    for (let poll = 0; poll < polls; poll++)
      if (TraceSpan.root(tracing, 'book poll') !== undefined) traced += 1;
    expect(started()).toBe(traced);
    // 1,000 expected; the bounds are over eight standard deviations (27) away.
    expect(traced).toBeGreaterThan(780);
    expect(traced).toBeLessThan(1_220);
  });

  it('traces every poll at 1 and none at 0', () => {
    for (const [sampleRatio, expected] of [
      [1, 100],
      [0, 0],
    ] as const) {
      const { tracer, started } = countingTracer();
      const tracing = { tracer, sampleRatio, propagator: new W3CTraceContextPropagator() };
      for (let poll = 0; poll < 100; poll++) TraceSpan.root(tracing, 'book poll');
      expect(started()).toBe(expected);
    }
  });
});
