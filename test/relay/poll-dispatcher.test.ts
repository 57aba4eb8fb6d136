/**
 * The dispatcher starts requests only as the budget allows and chooses each target at the moment
 * its request starts: a target removed before then is never asked, nothing queues, and no more
 * requests are in flight than the concurrency cap.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type DispatchTarget, PollDispatcher } from '../../src/relay/poll-dispatcher.ts';

function target(key: string, asked: string[], hold: Promise<void> = Promise.resolve()): DispatchTarget {
  return {
    key,
    kind: 'book',
    timing: { minIntervalMs: 1_000, maxAgeMs: 30_000 },
    addedAt: 0,
    lastAskedAt: undefined,
    confirmedAt: undefined,
    inFlight: false,
    awaitingFirstAsk: true,
    weight: 1,
    changeRate: 1,
    hintedAt: undefined,
    poll() {
      this.awaitingFirstAsk = false;
      asked.push(key);
      return hold;
    },
  };
}

describe('PollDispatcher', () => {
  let dispatcher: PollDispatcher | undefined;
  afterEach(() => {
    dispatcher?.stop();
    vi.useRealTimers();
  });

  it('spends at most the budget, never above the concurrency cap, and never asks a removed target', async () => {
    vi.useFakeTimers();
    const asked: string[] = [];
    let release!: () => void;
    const hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    dispatcher = new PollDispatcher({
      ratePerSecond: 10,
      concurrency: 3,
      mode: 'freshness',
      turnMs: 10,
      now: () => Date.now(),
    });
    dispatcher.start();
    for (let i = 0; i < 20; i++) dispatcher.add(target(`t${i}`, asked, hold));
    await vi.advanceTimersByTimeAsync(500);
    expect(asked).toHaveLength(3); // the concurrency cap, though the budget allows more
    expect(dispatcher.inFlight).toBe(3);
    // Abandoned before their turn: gone, never sent.
    for (let i = 3; i < 15; i++) dispatcher.remove(`t${i}`);
    release();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(asked.filter((key) => Number(key.slice(1)) >= 3 && Number(key.slice(1)) < 15)).toEqual([]);
    expect(new Set(asked)).toEqual(new Set(['t0', 't1', 't2', 't15', 't16', 't17', 't18', 't19']));
    expect(dispatcher.size).toBe(8);
    // The budget: a burst of 2 (a fifth of a second), then 10 a second.
    expect(dispatcher.achievedPerSecond('book')).toBeLessThanOrEqual(10);
  });

  it('never starts more than the budget over time', async () => {
    vi.useFakeTimers();
    const asked: string[] = [];
    dispatcher = new PollDispatcher({
      ratePerSecond: 20,
      concurrency: 100,
      mode: 'round-robin',
      turnMs: 5,
      now: () => Date.now(),
    });
    dispatcher.start();
    for (let i = 0; i < 500; i++) dispatcher.add(target(`t${i}`, asked));
    await vi.advanceTimersByTimeAsync(10_000);
    // 10 s at 20/s plus the initial burst of 4.
    expect(asked.length).toBeGreaterThanOrEqual(190);
    expect(asked.length).toBeLessThanOrEqual(204);
  });
});
