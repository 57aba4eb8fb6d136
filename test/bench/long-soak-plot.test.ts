/**
 * The long soak's plot (bench/lib/long-soak/svg.ts) and its reading of `/metrics`
 * (bench/lib/long-soak/prometheus-text.ts): a panel per figure with a line per relay inside its
 * frame, the warm-up and the events marked, names escaped; metric samples summed by name and labels.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { metricSum } from '../../bench/lib/long-soak/prometheus-text.ts';
import { niceCeiling, smallMultiplesSvg } from '../../bench/lib/long-soak/svg.ts';
import { propertyRuns } from '../support/property-runs.ts';

const line = (slope: number) =>
  Array.from({ length: 181 }, (_, i) => ({ minute: i / 6, value: 10 + slope * i }));

describe('smallMultiplesSvg', () => {
  const svg = smallMultiplesSvg(
    [
      { title: 'heap used after GC', unit: 'MB', series: [line(0), line(0.1), line(0.2)] },
      { title: 'Redis keys & <memory>', unit: 'count', series: [line(1)] },
      { title: 'empty', unit: 'count', series: [[]] },
    ],
    ['relay 1', 'relay 2', 'relay 3'],
    {
      title: 'Long soak',
      totalMinutes: 30,
      warmupMinutes: 5,
      events: [
        { minute: 2, untilMinute: 2.33, label: 'fault burst' },
        { minute: 15, label: 'Redis restart' },
      ],
    },
  );

  it('draws one line per relay and figure, every point inside the drawing', () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    const polylines = [...svg.matchAll(/<polyline points="([^"]+)"/g)].map((match) => match[1]!);
    expect(polylines).toHaveLength(4);
    const [width, height] = /viewBox="0 0 (\d+) (\d+)"/.exec(svg)!.slice(1).map(Number) as [number, number];
    for (const points of polylines) {
      for (const point of points.split(' ')) {
        const [x, y] = point.split(',').map(Number) as [number, number];
        expect(x).toBeGreaterThanOrEqual(0);
        expect(x).toBeLessThanOrEqual(width);
        expect(y).toBeGreaterThanOrEqual(0);
        expect(y).toBeLessThanOrEqual(height);
      }
    }
  });

  it('marks the warm-up and each event, names the relays and escapes text', () => {
    expect(svg.match(/stroke-dasharray/g)).toHaveLength(3);
    expect(svg.match(/<title>fault burst<\/title>/g)).toHaveLength(3);
    expect(svg).toContain('<title>Redis restart</title>');
    for (const relay of ['relay 1', 'relay 2', 'relay 3']) expect(svg).toContain(relay);
    expect(svg).toContain('Redis keys &amp; &lt;memory&gt;');
    expect(svg).not.toContain('<memory>');
  });
});

describe('niceCeiling', () => {
  it('is 1, 2 or 5 times a power of ten, at least the value and less than 2.5 times it', () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-3, max: 1e9, noNaN: true }), (value) => {
        const ceiling = niceCeiling(value);
        expect(ceiling).toBeGreaterThanOrEqual(value);
        expect(ceiling).toBeLessThan(value * 2.5 + 1e-9);
        const mantissa = ceiling / 10 ** Math.floor(Math.log10(ceiling) + 1e-12);
        expect([1, 2, 5, 10].some((nice) => Math.abs(mantissa - nice) < 1e-9)).toBe(true);
      }),
      { numRuns: propertyRuns(500) },
    );
    expect(niceCeiling(0)).toBe(1);
  });
});

describe('metricSum', () => {
  const text = [
    '# HELP market_relay_streams Streams held.',
    '# TYPE market_relay_streams gauge',
    'market_relay_streams{channel="book",state="live"} 12',
    'market_relay_streams{channel="book",state="stale"} 1',
    'market_relay_streams{channel="price",state="live"} 3',
    'market_relay_streams_total 99',
    'market_relay_process_open_fds 41',
  ].join('\n');

  it('sums the samples of exactly one metric, optionally of some labels', () => {
    expect(metricSum(text, 'market_relay_streams')).toBe(16);
    expect(metricSum(text, 'market_relay_streams', { state: 'live' })).toBe(15);
    expect(metricSum(text, 'market_relay_streams', { channel: 'book', state: 'stale' })).toBe(1);
    expect(metricSum(text, 'market_relay_process_open_fds')).toBe(41);
    expect(metricSum(text, 'market_relay_missing')).toBeNaN();
  });
});
