/**
 * @module relay/channels/book/change-hint-target
 * The cheapest change hint upstream offers: one map that answers for every market in one request
 * (channels/relay-registry.ts `hintMap`, a channel's contribution). An entry that differs from the
 * previous answer says the market's top of book (or last trade) moved, so its book is worth asking
 * for before books that say nothing. Used only by the freshness scheduler, and only while the
 * budget cannot poll every book at its minimum interval anyway (then the request would buy
 * nothing). While clients subscribe to the map's channel, its polls read the same map: the hints
 * are read from those (`ChangeHints.read`), and no request of their own is made.
 */
import { publicReason } from '../../../upstream/errors.ts';
import type { PollOutcome } from '../../poll/outcomes.ts';
import { type PollContext, PollTarget } from '../../poll/poll-target.ts';
import type { TargetTiming } from '../../poll/scheduler.ts';
import { type HintMapResponse, hintMap } from '../relay-registry.ts';

export const HINTS_TARGET_KEY = 'hints';

/** What a change hint tells the poller about a book. */
interface HintSink {
  /** A read asked at `askedAt` shows the market's book moved, about `movedAt`. */
  hintBook(market: string, askedAt: number, movedAt: number): void;
  /** A read asked at `askedAt` would have shown a move of the market's book. */
  coverBook(market: string, askedAt: number): void;
}

/** Reads successive hint maps into book hints. */
export class ChangeHints {
  /** market -> fingerprint of its last entry, for the markets whose books are polled. */
  readonly #seen = new Map<string, string>();
  readonly #sink: HintSink;
  readonly #wanted: (market: string) => boolean;
  /** When the previous read was asked: a move it did not show happened after it. */
  #previousReadAt: number | undefined;

  constructor(sink: HintSink, wanted: (market: string) => boolean) {
    this.#sink = sink;
    this.#wanted = wanted;
  }

  /** Forgets a market whose book is no longer polled. */
  forget(market: string): void {
    this.#seen.delete(market);
  }

  /** A map asked for at `askedAt`, whoever asked. */
  read(response: HintMapResponse, askedAt: number): void {
    const movedAt = this.#previousReadAt === undefined ? askedAt : (this.#previousReadAt + askedAt) / 2;
    this.#previousReadAt = askedAt;
    for (const [market, entry] of hintMap.entries(response)) {
      if (!this.#wanted(market)) continue;
      this.#sink.coverBook(market, askedAt);
      const fingerprint = hintMap.fingerprint(entry);
      const previous = this.#seen.get(market);
      this.#seen.set(market, fingerprint);
      if (previous !== undefined && previous !== fingerprint) this.#sink.hintBook(market, askedAt, movedAt);
    }
  }
}

/** The hint map's own request, while no stream of its channel polls it anyway. */
export class ChangeHintTarget extends PollTarget {
  readonly kind = 'hints';
  readonly #hints: ChangeHints;

  constructor(timing: TargetTiming, context: PollContext, hints: ChangeHints) {
    super(HINTS_TARGET_KEY, timing, context);
    this.#hints = hints;
  }

  protected async pollOnce(): Promise<readonly PollOutcome[]> {
    const askedAt = this.beginAsk();
    try {
      const response = await hintMap.ask(this.source);
      if (this.removed) return [];
      this.#hints.read(response, askedAt);
      this.confirmed(askedAt, undefined);
    } catch (error) {
      // A missed hint costs nothing but the hint: books are still confirmed within their maximum age.
      this.lastError = publicReason(error);
    }
    return [];
  }
}
