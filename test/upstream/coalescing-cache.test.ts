import { describe, expect, it } from 'vitest';
import { CoalescingCache } from '../../src/upstream/coalescing-cache.ts';

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('CoalescingCache', () => {
  it('shares one load among concurrent requests, then serves it for ttlMs', async () => {
    let now = 0;
    const cache = new CoalescingCache<string>({ ttlMs: 100, capacity: 10, now: () => now });
    let loads = 0;
    const pending = deferred<string>();
    const load = () => {
      loads += 1;
      return pending.promise;
    };
    const answers = Array.from({ length: 100 }, () => cache.get('k', load));
    pending.resolve('v');
    expect(await Promise.all(answers)).toEqual(Array(100).fill('v'));
    expect(loads).toBe(1);
    now = 99;
    await cache.get('k', load);
    expect(loads).toBe(1);
    now = 101;
    await cache.get('k', () => Promise.resolve('w'));
    expect(await cache.get('k', load)).toBe('w');
  });

  it('keeps no failure: the next request loads again', async () => {
    const cache = new CoalescingCache<string>({ ttlMs: 1_000, capacity: 10 });
    await expect(cache.get('k', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await cache.get('k', () => Promise.resolve('v'))).toBe('v');
  });

  it('holds at most `capacity` keys, dropping the oldest', async () => {
    const cache = new CoalescingCache<number>({ ttlMs: 1_000, capacity: 3 });
    for (let i = 0; i < 10; i++) await cache.get(`k${i}`, () => Promise.resolve(i));
    expect(cache.size).toBe(3);
    expect(await cache.get('k9', () => Promise.resolve(-1))).toBe(9);
    expect(await cache.get('k0', () => Promise.resolve(-1))).toBe(-1);
  });
});
