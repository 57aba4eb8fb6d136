/**
 * @module util/metric-factory
 * Counters, histograms and gauges read at scrape time, declared in one call each, under one name prefix and one registry: the
 * relay's and the simulator's metrics differ only in their names, help, labels and buckets.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface MetricFactory {
  counter<L extends string = never>(name: string, help: string, labelNames?: readonly L[]): Counter<L>;
  histogram<L extends string = never>(
    name: string,
    help: string,
    buckets: number[],
    labelNames?: readonly L[],
  ): Histogram<L>;
  /** A gauge whose value `collect` sets when Prometheus scrapes. */
  gauge<L extends string = never>(
    name: string,
    help: string,
    collect: (gauge: Gauge<L>) => void,
    labelNames?: readonly L[],
  ): Gauge<L>;
}

export function metricFactory(prefix: string, registry: Registry): MetricFactory {
  const registers = [registry];
  return {
    counter: (name, help, labelNames = []) =>
      new Counter({ name: `${prefix}${name}`, help, labelNames, registers }),
    histogram: (name, help, buckets, labelNames = []) =>
      new Histogram({ name: `${prefix}${name}`, help, labelNames, buckets, registers }),
    gauge: (name, help, collect, labelNames = []) =>
      new Gauge({
        name: `${prefix}${name}`,
        help,
        labelNames,
        registers,
        collect() {
          collect(this);
        },
      }),
  };
}
