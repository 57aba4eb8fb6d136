/**
 * @module upstream/admission
 * The caps on upstream load: at most `concurrency` requests in flight and at most `rps` started per
 * second (a rate gate: this relay's token bucket, or the cluster's budget), with the counts the
 * status page and metrics show. A call that finds a free slot starts without queueing or any
 * listener; only calls that wait listen for their signal.
 */
import type { RateGate } from './rate-gate.ts';

export interface AdmissionLoad {
  inFlight: number;
  queued: number;
}

export class Admission {
  readonly #concurrency: number;
  readonly #rate: RateGate;
  /** Calls waiting for a slot, first come first served. */
  readonly #waiters: (() => void)[] = [];
  /** Slots taken: by calls waiting for their rate token and by running work. */
  #slots = 0;
  #inFlight = 0;
  #queued = 0;

  constructor(options: { concurrency: number; rate: RateGate }) {
    this.#concurrency = options.concurrency;
    this.#rate = options.rate;
  }

  load(): AdmissionLoad {
    return { inFlight: this.#inFlight, queued: this.#queued };
  }

  /**
   * Waits for a concurrency slot, then a rate token, then runs `work`; counted as queued until then.
   * Rejects with the signal's reason as soon as it aborts while waiting; `work` itself must end when
   * the signal aborts (the exchange does).
   */
  async run<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T> {
    signal.throwIfAborted();
    this.#queued++;
    let queued = true;
    try {
      const slot = this.#takeSlot(signal);
      if (slot !== undefined) await slot;
      try {
        await this.#rate.acquire(signal);
        queued = false;
        this.#queued--;
        this.#inFlight++;
        try {
          return await work();
        } finally {
          this.#inFlight--;
        }
      } finally {
        this.#releaseSlot();
      }
    } finally {
      if (queued) this.#queued--;
    }
  }

  #takeSlot(signal: AbortSignal): Promise<void> | undefined {
    if (this.#slots < this.#concurrency && this.#waiters.length === 0) {
      this.#slots++;
      return undefined;
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.#waiters.indexOf(handOver);
        if (index !== -1) this.#waiters.splice(index, 1);
        reject(signal.reason);
      };
      const handOver = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      this.#waiters.push(handOver);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The slot goes to the first waiter, or back to the pool. */
  #releaseSlot(): void {
    const handOver = this.#waiters.shift();
    if (handOver === undefined) this.#slots--;
    else handOver();
  }
}
