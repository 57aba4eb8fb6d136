/**
 * Reconnect delays (client/connection/backoff): full jitter over a capped exponential, and the
 * random spread after a 1001 close, checked with an injected random source.
 */
import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  defaultBackoff,
  reconnectDelay,
} from '../../../packages/client/src/connection/backoff.ts';

const options = { baseMs: 100, maxMs: 5_000, goingAwaySpreadMs: 2_000 };
const almostOne = 1 - Number.EPSILON;

describe('backoff', () => {
  it('grows the ceiling exponentially from baseMs and caps it at maxMs', () => {
    const ceilings = [0, 1, 2, 3, 4, 5, 6, 10, 60].map((attempt) =>
      backoffDelay(attempt, options, () => almostOne),
    );
    expect(ceilings).toEqual([99, 199, 399, 799, 1599, 3199, 4999, 4999, 4999]);
  });

  it('is full jitter: the delay is the random fraction of the ceiling, down to zero', () => {
    expect(backoffDelay(3, options, () => 0)).toBe(0);
    expect(backoffDelay(3, options, () => 0.25)).toBe(200);
    expect(backoffDelay(3, options, () => 0.5)).toBe(400);
    expect(backoffDelay(20, options, () => 0.5)).toBe(2_500);
  });

  it('spreads many clients over the whole window rather than bunching them', () => {
    let state = 42;
    const random = () => {
      state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
      return state / 2 ** 31;
    };
    const delays = Array.from({ length: 10_000 }, () => backoffDelay(4, options, random));
    const buckets = [0, 0, 0, 0];
    for (const delay of delays) buckets[Math.floor(delay / 400)]! += 1;
    for (const count of buckets) expect(count).toBeGreaterThan(2_000);
    expect(Math.max(...delays)).toBeLessThan(1_600);
  });

  it('after a 1001 close, spreads the first reconnect over goingAwaySpreadMs instead', () => {
    expect(reconnectDelay(0, 1001, options, () => 0.5)).toBe(1_000);
    expect(reconnectDelay(0, 1001, options, () => almostOne)).toBe(1_999);
    expect(reconnectDelay(1, 1001, options, () => 0.5)).toBe(backoffDelay(1, options, () => 0.5));
    expect(reconnectDelay(0, 1006, options, () => 0.5)).toBe(50);
    expect(reconnectDelay(0, undefined, options, () => 0.5)).toBe(50);
  });

  it('has defaults that bound a reconnect storm', () => {
    expect(defaultBackoff.goingAwaySpreadMs).toBeGreaterThanOrEqual(1_000);
    expect(backoffDelay(100, defaultBackoff, () => almostOne)).toBeLessThan(defaultBackoff.maxMs);
  });
});
