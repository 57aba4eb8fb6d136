/**
 * What the status page and the metrics show of the budget's fair share: the heaviest few groups by
 * name (never an object, never an API key), the rest only counted.
 */
import { describe, expect, it } from 'vitest';
import { shareReport } from '../../src/observability/share-report.ts';

describe('shareReport', () => {
  it('names the heaviest groups, counts them all, and never names a connection object', () => {
    const connection = { deliver() {} };
    const shares = [
      { group: 'address 10.0.0.1', targets: 10_000, requestsPerSecond: 41.456, share: 0.92123 },
      { group: 'key 1a2b3c4d', targets: 3, requestsPerSecond: 3, share: 0.0666 },
      { group: connection, targets: 1, requestsPerSecond: 0.5, share: 0.0111 },
      ...Array.from({ length: 20 }, (_, i) => ({
        group: `address 10.0.1.${i}`,
        targets: 1,
        requestsPerSecond: 0,
        share: 0,
      })),
    ];
    const report = shareReport(shares, 3);
    expect(report.groups).toBe(23);
    expect(report.top).toEqual([
      { group: 'address 10.0.0.1', targets: 10_000, requestsPerSecond: 41.46, share: 0.921 },
      { group: 'key 1a2b3c4d', targets: 3, requestsPerSecond: 3, share: 0.067 },
      { group: 'connection', targets: 1, requestsPerSecond: 0.5, share: 0.011 },
    ]);
  });
});
