import { describe, expect, it } from 'vitest';
import { pollIntervals } from '../../../src/relay/poll/plan.ts';

describe('pollIntervals', () => {
  it('keeps the configured intervals when the budget covers every market', () => {
    expect(
      pollIntervals({ bookMarkets: 10, priceMarkets: 10, bookPollMs: 1000, pricePollMs: 1000, rps: 50 }),
    ).toEqual({
      bookIntervalMs: 1000,
      priceIntervalMs: 1000,
      stretch: 1,
    });
  });

  it('stretches both intervals by the same factor when the budget is short', () => {
    // 100 books/s + 2 batches/s against 90% of 50 rps = 45 requests/s.
    const intervals = pollIntervals({
      bookMarkets: 100,
      priceMarkets: 150,
      bookPollMs: 1000,
      pricePollMs: 1000,
      rps: 50,
    });
    expect(intervals.stretch).toBeCloseTo(102 / 45, 6);
    expect(intervals.bookIntervalMs).toBe(Math.ceil(1000 * (102 / 45)));
    expect(intervals.priceIntervalMs).toBe(intervals.bookIntervalMs);
    const requestsPerSecond =
      100 * (1000 / intervals.bookIntervalMs) + 2 * (1000 / intervals.priceIntervalMs);
    expect(requestsPerSecond).toBeLessThanOrEqual(45);
  });

  it('counts the targets of the other channels in the same stretch', () => {
    // 18 books/s + 9 market records, oracle feeds or the probabilities map a second: 27 against 9.
    const intervals = pollIntervals({
      bookMarkets: 18,
      priceMarkets: 0,
      bookPollMs: 1000,
      pricePollMs: 1000,
      otherRequestsPerSecond: 9,
      rps: 10,
    });
    expect(intervals.stretch).toBe(3);
    expect(intervals.bookIntervalMs).toBe(3000);
  });

  it('depends on markets, never on clients: no markets, no demand', () => {
    expect(
      pollIntervals({ bookMarkets: 0, priceMarkets: 0, bookPollMs: 500, pricePollMs: 700, rps: 1 }).stretch,
    ).toBe(1);
  });
});
