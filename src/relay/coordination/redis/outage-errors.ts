/**
 * @module relay/coordination/redis/outage-errors
 * The errors of one Redis outage, counted by message: during an outage ioredis reports the same few
 * failures over and over (every retry, every failed command), alternating between them, so the log
 * gets one line per distinct message and the recovery line gets the counts.
 */

export interface OutageSummary {
  /** Each distinct error message of the outage and how often it occurred. */
  errors: { message: string; count: number }[];
  /** How long the outage lasted, from its first error. */
  durationMs: number;
}

export class OutageErrors {
  readonly #counts = new Map<string, number>();
  #since: number | undefined;

  /** Counts one error; true when its message is new in this outage (the one to log). */
  record(message: string, now = Date.now()): boolean {
    this.#since ??= now;
    const count = this.#counts.get(message) ?? 0;
    this.#counts.set(message, count + 1);
    return count === 0;
  }

  get inOutage(): boolean {
    return this.#since !== undefined;
  }

  /** Ends the outage: its summary, or undefined when there was none. */
  recover(now = Date.now()): OutageSummary | undefined {
    if (this.#since === undefined) return undefined;
    const summary = {
      errors: [...this.#counts].map(([message, count]) => ({ message, count })),
      durationMs: now - this.#since,
    };
    this.#counts.clear();
    this.#since = undefined;
    return summary;
  }
}
