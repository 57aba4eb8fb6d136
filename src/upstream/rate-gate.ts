/**
 * @module upstream/rate-gate
 * Where an upstream attempt waits for its rate token. Pluggable so that `--upstream-rps` can be
 * one relay's budget (LocalRateGate, the default) or the whole cluster's (the Redis gate in
 * src/cluster/), while the transport's concurrency cap and retry loop stay the same.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { TokenBucket } from '../util/token-bucket.ts';

export interface RateGate {
  /**
   * Resolves when one more upstream request may start. Rejects with the signal's reason as soon as
   * it aborts, giving back what it had taken.
   */
  acquire(signal: AbortSignal): Promise<void>;
}

/** `rps` requests per second for this process alone, one second's worth of burst. */
export class LocalRateGate implements RateGate {
  readonly #bucket: TokenBucket;

  constructor(rps: number) {
    this.#bucket = new TokenBucket({ ratePerSecond: rps });
  }

  get ratePerSecond(): number {
    return this.#bucket.ratePerSecond;
  }

  async acquire(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
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
