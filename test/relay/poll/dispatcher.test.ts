/**
 * The dispatcher starts requests only as the budget allows and chooses each target at the moment
 * its request starts: a target removed before then is never asked, no poll queues, and no more
 * requests are in flight than the concurrency cap. One-off requests (the REST front's) share the
 * same budget: their share ahead of the polls, the rest only when the polls leave it.
 */
import { setMaxListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OneOffRefusedError } from '../../../src/relay/poll/dispatch-queues.ts';
import {
  type DispatcherOptions,
  type DispatchTarget,
  PollDispatcher,
} from '../../../src/relay/poll/dispatcher.ts';

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
  /** 20 a second, 100 in flight, round-robin, on the (fake) clock, then `options`. */
  function dispatcherWith(options: Partial<DispatcherOptions> = {}): PollDispatcher {
    dispatcher = new PollDispatcher({
      ratePerSecond: 20,
      concurrency: 100,
      mode: 'round-robin',
      turnMs: 5,
      now: () => Date.now(),
      ...options,
    });
    return dispatcher;
  }
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
    dispatcher = dispatcherWith({ ratePerSecond: 10, concurrency: 3, mode: 'freshness', turnMs: 10 });
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
    dispatcher = dispatcherWith();
    dispatcher.start();
    for (let i = 0; i < 500; i++) dispatcher.add(target(`t${i}`, asked));
    await vi.advanceTimersByTimeAsync(10_000);
    // 10 s at 20/s plus the initial burst of 4.
    expect(asked.length).toBeGreaterThanOrEqual(190);
    expect(asked.length).toBeLessThanOrEqual(204);
  });

  it('asks a target again when its interval has passed, and does not turn in between', async () => {
    vi.useFakeTimers();
    const askedAt: number[] = [];
    let turns = 0;
    dispatcher = dispatcherWith({ turnMs: 25, beforeTurn: () => turns++ });
    dispatcher.start();
    const book = target('t0', []);
    const { poll } = book;
    book.timing = { minIntervalMs: 200, maxAgeMs: 30_000 };
    book.poll = function () {
      askedAt.push(Date.now());
      return poll.call(this);
    };
    const start = Date.now();
    dispatcher.add(book);
    await vi.advanceTimersByTimeAsync(10_000);
    const gaps = askedAt.slice(1).map((at, i) => at - askedAt[i]!);
    // On time within a fifth of a turn (wakes fall on a 5 ms grid), not on the next tick of a 25 ms clock.
    expect(askedAt[0]! - start).toBeLessThan(5);
    expect(askedAt.length).toBeGreaterThanOrEqual(48);
    for (const gap of gaps) {
      expect(gap).toBeGreaterThanOrEqual(200);
      expect(gap).toBeLessThanOrEqual(205);
    }
    // A turn when the target comes due and one when its poll ends, not one every 25 ms (400).
    expect(turns).toBeLessThanOrEqual(2 * askedAt.length + 10);
  });

  it('asks a target that came due while its turn was starting others when it comes due, not a turn later', async () => {
    vi.useFakeTimers();
    // The clock moves while a turn starts a request (a busy machine): `skew` is that time.
    let skew = 0;
    const now = () => Date.now() + skew;
    dispatcher = dispatcherWith({ now });
    dispatcher.start();
    const askedAt = new Map<string, number[]>();
    const timed = (key: string, onAsk: (polled: DispatchTarget, asks: number) => Promise<void>) => {
      const polled = target(key, []);
      polled.timing = { minIntervalMs: 200, maxAgeMs: 30_000 };
      polled.poll = function () {
        this.awaitingFirstAsk = false;
        const times = askedAt.get(key) ?? [];
        askedAt.set(key, times);
        times.push(now());
        return onAsk(this, times.length);
      };
      return polled;
    };
    dispatcher.add(timed('b', async () => {}));
    await vi.advanceTimersByTimeAsync(20);
    const bFirst = askedAt.get('b')![0]!;
    // `a` comes due 1 ms before `b`; its second ask takes 2 ms and is still under way when `b` comes
    // due, so no poll's end wakes the dispatcher in between.
    dispatcher.add(
      timed('a', (polled, asks) => {
        if (asks === 1) polled.timing = { minIntervalMs: bFirst + 199 - now(), maxAgeMs: 30_000 };
        if (asks !== 2) return Promise.resolve();
        skew += 2;
        return new Promise<void>((resolve) => setTimeout(resolve, 100));
      }),
    );
    await vi.advanceTimersByTimeAsync(400);
    const a = askedAt.get('a')!;
    const b = askedAt.get('b')!;
    expect(a[1]).toBe(bFirst + 199);
    // Due at bFirst + 200: asked on the next wake of the grid, not a whole turn (5 ms) later.
    expect(b[1]! - (bFirst + 200)).toBeLessThanOrEqual(3);
  });

  describe('one-off requests', () => {
    /** Enqueues `count` one-off requests that each record their start and finish at once. */
    function oneOffs(count: number, started: number[]): Promise<unknown>[] {
      const signal = new AbortController().signal;
      // All of them wait on this one signal: many listeners are the point, not a leak.
      setMaxListeners(0, signal);
      return Array.from({ length: count }, (_, i) =>
        dispatcher!
          .runOneOff(async () => {
            started.push(i);
            return i;
          }, signal)
          .catch((error: unknown) => error),
      );
    }

    it('take their share ahead of the polls while the polls want the whole budget, and no more', async () => {
      vi.useFakeTimers();
      const asked: string[] = [];
      const started: number[] = [];
      dispatcher = dispatcherWith({ oneOffs: { share: 0.25, maxWaiting: 1_000 } });
      dispatcher.start();
      // 500 books asked at most once a second: always more due than the budget allows.
      for (let i = 0; i < 500; i++) dispatcher.add(target(`t${i}`, asked));
      void oneOffs(500, started);
      await vi.advanceTimersByTimeAsync(10_000);
      // 10 s at 20/s plus the first burst of 4: a quarter to the one-offs, the rest to the polls.
      expect(asked.length + started.length).toBeLessThanOrEqual(204);
      expect(started.length).toBeGreaterThanOrEqual(48);
      expect(started.length).toBeLessThanOrEqual(52);
      expect(asked.length).toBeGreaterThanOrEqual(145);
      expect(started).toEqual([...started].sort((a, b) => a - b)); // first come, first served
    });

    it('get what the polls leave beyond their share', async () => {
      vi.useFakeTimers();
      const started: number[] = [];
      dispatcher = dispatcherWith({ oneOffs: { share: 0.25, maxWaiting: 1_000 } });
      void oneOffs(100, started);
      await vi.advanceTimersByTimeAsync(4_000);
      // No polls: the whole budget (4 at once, then 20 a second), not just the quarter.
      expect(started.length).toBeGreaterThanOrEqual(80);
      expect(started.length).toBeLessThanOrEqual(84);
    });

    it('are refused past the queue bound, leave it when their caller gives up, and are refused on stop', async () => {
      vi.useFakeTimers();
      dispatcher = dispatcherWith({ concurrency: 1, oneOffs: { share: 0.25, maxWaiting: 2 } });
      let release!: () => void;
      const first = dispatcher.runOneOff(
        () =>
          new Promise<string>((resolve) => {
            release = () => resolve('first');
          }),
        new AbortController().signal,
      );
      await vi.advanceTimersByTimeAsync(10);
      expect(dispatcher.inFlight).toBe(1); // the concurrency cap: the others wait
      const gaveUp = new AbortController();
      const second = dispatcher.runOneOff(async () => 'second', gaveUp.signal).catch((error) => error);
      const third = dispatcher.runOneOff(async () => 'third', new AbortController().signal);
      await expect(dispatcher.runOneOff(async () => 'fourth', new AbortController().signal)).rejects.toThrow(
        OneOffRefusedError,
      );
      gaveUp.abort(new Error('gave up'));
      expect(((await second) as Error).message).toBe('gave up');
      expect(dispatcher.oneOffsWaiting).toBe(1);
      release();
      await vi.advanceTimersByTimeAsync(100);
      expect(await first).toBe('first');
      expect(await third).toBe('third');

      let hold!: () => void;
      void dispatcher.runOneOff(
        () => new Promise<void>((resolve) => (hold = resolve)),
        new AbortController().signal,
      );
      await vi.advanceTimersByTimeAsync(100);
      const waiting = dispatcher.runOneOff(async () => 'never', new AbortController().signal);
      dispatcher.stop();
      await expect(waiting).rejects.toThrow('the poller is stopped');
      hold();
    });
  });
});
