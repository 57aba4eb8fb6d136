/**
 * @module util/metric-factory
 * Counters and histograms declared in one call each, under one name prefix and one registry: the
 * relay's and the simulator's metrics differ only in their names, help, labels and buckets.
 */
import { Counter, Histogram, type Registry } from 'prom-client';

export interface MetricFactory {
  counter<L extends string = never>(name: string, help: string, labelNames?: readonly L[]): Counter<L>;
  histogram<L extends string = never>(
    name: string,
    help: string,
    buckets: number[],
    labelNames?: readonly L[],
  ): Histogram<L>;
}

export function metricFactory(prefix: string, registry: Registry): MetricFactory {
  const registers = [registry];
  return {
    counter: (name, help, labelNames = []) =>
      new Counter({ name: `${prefix}${name}`, help, labelNames, registers }),
    histogram: (name, help, buckets, labelNames = []) =>
      new Histogram({ name: `${prefix}${name}`, help, labelNames, buckets, registers }),
  };
}
