/**
 * `--upstream-rps` as a ceiling in every window (src/upstream/rate-gate.ts): whatever the arrivals,
 * the starts a window gives out never put more than its limit into any window of its length, each
 * start as early as that allows.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StartWindow } from '../../src/upstream/rate-gate.ts';

describe('StartWindow', () => {
  it('never gives more than its limit starts within any window, and none before it is asked', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.array(fc.integer({ min: 0, max: 200 }), { minLength: 1, maxLength: 400 }),
        (limit, gaps) => {
          const window = new StartWindow(limit, 1_000);
          const starts: number[] = [];
          let now = 0;
          for (const gap of gaps) {
            now += gap;
            const wait = window.reserve(now);
            expect(wait).toBeGreaterThanOrEqual(0);
            starts.push(now + wait);
          }
          // Every window [s, s + 1000) opening at a start holds at most `limit` starts.
          for (let i = 0; i < starts.length; i++) {
            let within = 0;
            for (let j = i; j < starts.length && starts[j]! < starts[i]! + 1_000; j++) within += 1;
            expect(within).toBeLessThanOrEqual(limit);
          }
        },
      ),
    );
  });

  it('lets a start through at once while the last second holds fewer than the limit', () => {
    const window = new StartWindow(3, 1_000);
    expect([window.reserve(0), window.reserve(10), window.reserve(20)]).toEqual([0, 0, 0]);
    // The fourth waits for the first to leave the window.
    expect(window.reserve(30)).toBe(970);
    expect(window.reserve(2_000)).toBe(0);
  });

  it('counts a start from when it is to happen (after another limit’s wait)', () => {
    const window = new StartWindow(2, 1_000);
    // Asked at 0, starting at 500 (a token bucket's wait): the window's second runs to 1500.
    expect(window.reserve(500, 0)).toBe(500);
    expect(window.reserve(600)).toBe(0);
    expect(window.reserve(700)).toBe(800);
  });
});
