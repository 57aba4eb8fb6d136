/**
 * @module relay/change-hints
 * The cheapest change hint upstream offers: `GET /api/markets/probabilities` answers for every
 * market in one request. An entry that differs from the previous answer says the market's top of
 * book (or last trade) moved, so its book is worth asking for before books that say nothing. Used
 * only by the freshness scheduler, and only while the budget cannot poll every book at its minimum
 * interval anyway (then the request would buy nothing).
 */
import { publicReason } from '../upstream/errors.ts';
import type { ProbabilityEntry } from '../upstream/schemas.ts';
import type { TargetTiming } from './poll-scheduler.ts';
import { type PollContext, PollTarget } from './poll-target.ts';

export const HINTS_TARGET_KEY = 'hints';

export class ChangeHintTarget extends PollTarget {
  readonly kind = 'hints';
  /** market -> fingerprint of its last entry, for the markets whose books are polled. */
  readonly #seen = new Map<string, string>();
  readonly #wanted: (market: string) => boolean;
  /** When the previous read was asked: a move it did not show happened after it. */
  #previousReadAt: number | undefined;

  constructor(timing: TargetTiming, context: PollContext, wanted: (market: string) => boolean) {
    super(HINTS_TARGET_KEY, timing, context);
    this.#wanted = wanted;
  }

  /** Forgets markets whose books are no longer polled. */
  prune(): void {
    for (const market of this.#seen.keys()) if (!this.#wanted(market)) this.#seen.delete(market);
  }

  async poll(): Promise<void> {
    const askedAt = this.beginAsk();
    try {
      const { probabilities } = await this.context.source.probabilities();
      if (this.removed) return;
      const movedAt = this.#previousReadAt === undefined ? askedAt : (this.#previousReadAt + askedAt) / 2;
      this.#previousReadAt = askedAt;
      for (const [id, entry] of Object.entries(probabilities)) {
        const market = id.toLowerCase();
        if (!this.#wanted(market)) continue;
        this.context.coverBook(market, askedAt);
        const fingerprint = fingerprintOf(entry);
        const previous = this.#seen.get(market);
        this.#seen.set(market, fingerprint);
        if (previous !== undefined && previous !== fingerprint)
          this.context.hintBook(market, askedAt, movedAt);
      }
      this.confirmed(askedAt, undefined);
    } catch (error) {
      // A missed hint costs nothing but the hint: books are still confirmed within their maximum age.
      this.lastError = publicReason(error);
    }
  }
}

function fingerprintOf(entry: ProbabilityEntry): string {
  return `${entry.timestamp}|${entry.midpoint}|${entry.best_bid}|${entry.best_ask}|${entry.last_trade_price}`;
}
