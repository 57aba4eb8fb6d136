/**
 * @module upstream/admission
 * The caps on upstream load: at most `concurrency` requests in flight (p-limit) and at most `rps`
 * started per second (a token bucket), with the counts the status page and metrics show.
 */
import { setTimeout as delay } from 'node:timers/promises';
import pLimit, { type LimitFunction } from 'p-limit';
import { TokenBucket } from '../util/token-bucket.ts';
import { raceAbort } from './abort.ts';

export interface AdmissionLoad {
  inFlight: number;
  queued: number;
}

export class Admission {
  readonly #limit: LimitFunction;
  readonly #bucket: TokenBucket;
  #inFlight = 0;
  #queued = 0;

  constructor(options: { concurrency: number; rps: number }) {
    this.#limit = pLimit(options.concurrency);
    this.#bucket = new TokenBucket({ ratePerSecond: options.rps });
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
        await this.#takeToken(signal);
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

  async #takeToken(signal: AbortSignal): Promise<void> {
    const waitMs = this.#bucket.reserve();
    if (waitMs === 0) return;
    try {
      await delay(waitMs, undefined, { signal });
    } catch (error) {
      this.#bucket.refund();
      throw error;
    }
  }
}
