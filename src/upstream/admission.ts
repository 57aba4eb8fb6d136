/**
 * @module upstream/admission
 * The caps on upstream load: at most `concurrency` requests in flight (p-limit) and at most `rps`
 * started per second (a rate gate: this relay's token bucket, or the cluster's budget), with the
 * counts the status page and metrics show.
 */
import pLimit, { type LimitFunction } from 'p-limit';
import { raceAbort } from './abort.ts';
import type { RateGate } from './rate-gate.ts';

export interface AdmissionLoad {
  inFlight: number;
  queued: number;
}

export class Admission {
  readonly #limit: LimitFunction;
  readonly #rate: RateGate;
  #inFlight = 0;
  #queued = 0;

  constructor(options: { concurrency: number; rate: RateGate }) {
    this.#limit = pLimit(options.concurrency);
    this.#rate = options.rate;
  }

  load(): AdmissionLoad {
    return { inFlight: this.#inFlight, queued: this.#queued };
  }

  /**
   * Waits for a concurrency slot, then a rate token, then runs `work`; counted as queued until then.
   * Rejects with the signal's reason as soon as it aborts, waiting or not.
   */
  async run<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T> {
    this.#queued++;
    let waiting = true;
    const stopWaiting = (): void => {
      if (waiting) {
        waiting = false;
        this.#queued--;
      }
    };
    try {
      const run = this.#limit(async () => {
        signal.throwIfAborted();
        await this.#rate.acquire(signal);
        stopWaiting();
        this.#inFlight++;
        try {
          return await work();
        } finally {
          this.#inFlight--;
        }
      });
      return await raceAbort(run, signal);
    } finally {
      stopWaiting();
    }
  }
}
