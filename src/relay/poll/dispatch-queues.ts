/**
 * @module relay/poll/dispatch-queues
 * What the dispatcher (relay/poll/dispatcher.ts) waits on, apart from the targets themselves.
 * The moments at which polled targets may be asked again, earliest first (`DueTimes`): the
 * dispatcher sleeps until the next one instead of looking for due targets on a fixed tick. A binary
 * min-heap of times; a time whose target is gone meanwhile costs one turn that starts nothing, so
 * entries are never removed but by `takeUntil`.
 * Upstream requests that are not polls (the REST front's forwarded requests) waiting for a slot of
 * the polling budget (`OneOffQueue`, docs/scheduler.md "One-off requests"): first come, first
 * served, at most `capacity` waiting, each given up as soon as its caller's signal aborts. The
 * dispatcher decides when each starts.
 */
export class DueTimes {
  readonly #times: number[] = [];

  get size(): number {
    return this.#times.length;
  }

  /** The earliest time held; `Infinity` when none is. */
  get next(): number {
    return this.#times[0] ?? Number.POSITIVE_INFINITY;
  }

  add(at: number): void {
    const times = this.#times;
    let index = times.push(at) - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (times[parent]! <= at) break;
      times[index] = times[parent]!;
      index = parent;
    }
    times[index] = at;
  }

  /** Drops every time at or before `now`; how many there were. */
  takeUntil(now: number): number {
    let taken = 0;
    while (this.#times.length > 0 && this.#times[0]! <= now) {
      this.#removeFirst();
      taken += 1;
    }
    return taken;
  }

  clear(): void {
    this.#times.length = 0;
  }

  #removeFirst(): void {
    const times = this.#times;
    const last = times.pop()!;
    if (times.length === 0) return;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= times.length) break;
      const right = left + 1;
      const child = right < times.length && times[right]! < times[left]! ? right : left;
      if (times[child]! >= last) break;
      times[index] = times[child]!;
      index = child;
    }
    times[index] = last;
  }
}

/** The queue is full: the request is refused at once rather than waiting behind the others. */
export class OneOffRefusedError extends Error {
  constructor(capacity: number) {
    super(`${capacity} upstream requests already wait for the budget`);
    this.name = 'OneOffRefusedError';
  }
}

interface Waiting {
  /** Runs the request; settles the caller's promise with its outcome (never rejects itself). */
  start(): Promise<void>;
  /** Settles the caller's promise with `error` without running the request. */
  refuse(error: Error): void;
}

export class OneOffQueue {
  readonly #capacity: number;
  readonly #waiting: Waiting[] = [];

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get length(): number {
    return this.#waiting.length;
  }

  /**
   * `work` once the dispatcher starts it (`take()`); rejects with OneOffRefusedError when the queue
   * is full, and with the signal's reason when it aborts before the start.
   */
  enqueue<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#waiting.length >= this.#capacity) return Promise.reject(new OneOffRefusedError(this.#capacity));
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        const index = this.#waiting.indexOf(waiting);
        if (index >= 0) this.#waiting.splice(index, 1);
        reject(signal.reason);
      };
      const waiting: Waiting = {
        start: async () => {
          signal.removeEventListener('abort', onAbort);
          try {
            resolve(await work());
          } catch (error) {
            reject(error);
          }
        },
        refuse: (error) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(waiting);
    });
  }

  /** The longest-waiting request, now started by the caller (undefined when none waits). */
  take(): Waiting | undefined {
    return this.#waiting.shift();
  }

  /** Refuses everything still waiting (the relay is stopping). */
  clear(error: Error): void {
    for (const waiting of this.#waiting.splice(0)) waiting.refuse(error);
  }
}
