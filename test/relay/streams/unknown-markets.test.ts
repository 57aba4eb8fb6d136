import { describe, expect, it } from 'vitest';
import { UnknownMarkets } from '../../../src/relay/streams/unknown-markets.ts';

describe('UnknownMarkets', () => {
  it('remembers a market until its entry expires', () => {
    let now = 0;
    const unknown = new UnknownMarkets({ ttlMs: 100, capacity: 10, now: () => now });
    unknown.add('a');
    expect(unknown.has('a')).toBe(true);
    expect(unknown.has('b')).toBe(false);
    now = 99;
    expect(unknown.has('a')).toBe(true);
    now = 100;
    expect(unknown.has('a')).toBe(false);
    expect(unknown.size).toBe(0);
  });

  it('keeps at most `capacity` entries, dropping the oldest', () => {
    const unknown = new UnknownMarkets({ ttlMs: 1_000, capacity: 2, now: () => 0 });
    unknown.add('a');
    unknown.add('b');
    unknown.add('a'); // refreshed: now the newest
    unknown.add('c');
    expect([unknown.has('a'), unknown.has('b'), unknown.has('c')]).toEqual([true, false, true]);
  });
});
