/**
 * @module bench/lib/latency
 * Latency from a frame's `rts` stamp (the relay's receipt of the upstream response, or a
 * baseline's send time) to the load generator's receipt, in an HdrHistogram. `rts` has millisecond
 * resolution (protocol.md), the receipt time sub-millisecond; both clocks are the same machine's.
 */
import { performance } from 'node:perf_hooks';
import * as hdr from 'hdr-histogram-js';

export interface LatencySummary {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export class LatencyRecorder {
  #histogram = LatencyRecorder.#fresh();

  static #fresh(): hdr.Histogram {
    return hdr.build({
      lowestDiscernibleValue: 1,
      highestTrackableValue: 600_000_000,
      numberOfSignificantValueDigits: 3,
    });
  }

  /** Records the time since `sentAtMs` (epoch ms), in microseconds; a clock step backwards counts 0. */
  record(sentAtMs: number): void {
    const nowMs = performance.timeOrigin + performance.now();
    this.#histogram.recordValue(Math.max(0, Math.round((nowMs - sentAtMs) * 1000)));
  }

  reset(): void {
    this.#histogram = LatencyRecorder.#fresh();
  }

  summary(): LatencySummary {
    const h = this.#histogram;
    return {
      count: h.totalCount,
      p50Ms: h.getValueAtPercentile(50) / 1000,
      p99Ms: h.getValueAtPercentile(99) / 1000,
      maxMs: h.maxValue / 1000,
    };
  }
}

/** The `p`th percentile (0..100) of plain values; 0 for none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = values.slice().sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

/** The median of plain values (the mean of the middle two for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
