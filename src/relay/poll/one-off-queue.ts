/**
 * @module relay/poll/one-off-queue
 * Upstream requests that are not polls (the REST front's forwarded requests) waiting for a slot of
 * the polling budget (docs/scheduler.md "One-off requests"): first come, first served, at most
 * `capacity` waiting, each given up as soon as its caller's signal aborts. The dispatcher
 * (relay/poll/dispatcher.ts) decides when each starts.
 */

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
