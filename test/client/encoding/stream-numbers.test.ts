/**
 * The SDK's map of one connection's stream numbers (client/connection/stream-numbers): learnt from
 * `subscribed`, one number per stream (a replaced number is forgotten), emptied per connection.
 */
import { describe, expect, it } from 'vitest';
import { StreamNumbers } from '../../../packages/client/src/connection/stream-numbers.ts';

const a = '3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f';
const b = 'b7e2c4a1-93f0-4d5e-8a6b-2c1d0e9f8a7b';

describe('StreamNumbers', () => {
  it('maps each announced number to its channel, market and depth', () => {
    const numbers = new StreamNumbers();
    numbers.learn({ channel: 'book', depth: 10, streams: { [a]: 4, [b]: 5 } });
    numbers.learn({ channel: 'book', streams: { [a]: 6 } });
    numbers.learn({ channel: 'price', streams: { [a]: 7 } });
    numbers.learn({ channel: 'trades' });
    expect(numbers.get(4)).toEqual({ channel: 'book', market: a, depth: 10 });
    expect(numbers.get(5)).toEqual({ channel: 'book', market: b, depth: 10 });
    expect(numbers.get(6)).toEqual({ channel: 'book', market: a, depth: null });
    expect(numbers.get(7)).toEqual({ channel: 'price', market: a });
    expect(numbers.get(8)).toBeUndefined();
  });

  it('forgets the number a stream had when it is announced with another, and everything on clear', () => {
    const numbers = new StreamNumbers();
    numbers.learn({ channel: 'book', depth: 10, streams: { [a]: 4 } });
    numbers.learn({ channel: 'book', depth: 10, streams: { [a]: 4 } });
    expect(numbers.get(4)).toEqual({ channel: 'book', market: a, depth: 10 });
    numbers.learn({ channel: 'book', depth: 10, streams: { [a]: 9 } });
    expect(numbers.get(4)).toBeUndefined();
    expect(numbers.get(9)).toEqual({ channel: 'book', market: a, depth: 10 });
    numbers.clear();
    expect(numbers.get(9)).toBeUndefined();
  });
});
