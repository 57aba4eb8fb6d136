/**
 * @module channels/candles/relay-trade-prints
 * Everything the server part of `candles` knows of its `trades` source (./sources.ts): a stream
 * reads upstream's activity pages, walked as the `trades` channel walks them
 * (channels/trades/relay-activity.ts): its first poll reads back a few pages (an interval it could
 * read only in part gets no candle), later polls only what is new. Each print counts once: a
 * stream keeps what it took, and in cluster mode the lease holder shares the newest ids it took
 * with its series, so a relay the lease moves to counts none of them again. A print adds its
 * price to the candle as any sample does (./relay-series.ts), its size to the volume and one to
 * the count.
 */

import { z } from 'zod';
import { sumDecimals } from '../../protocol/decimal.ts';
import { decimalString } from '../../upstream/schemas.ts';
import type { KeptPoll } from '../relay-definition.ts';
import { ACTIVITY_PAGE_SIZE, TradeHistory, walkActivity } from '../trades/relay-activity.ts';
import { type ActivityUpstream, activityPages } from '../trades/relay-activity-pages.ts';
import type { TradesEventMap } from '../trades/relay-poll.ts';
import type { TradeEntry } from '../trades/trades.ts';
import { type CandlesStream, candleIntervalMs } from './streams.ts';

/** The upstream call the prints are read with: the activity listing. */
export type PrintsUpstream = ActivityUpstream;

/** The events a candles poll emits: those of the walk it shares with the `trades` channel. */
export type CandlesEventMap = TradesEventMap;

/** A trade print's price and size (decimal strings) at its time (ms). */
export interface TradeSample {
  at: number;
  price: string;
  size: string;
}

/** What a trades candle sums beyond its prices: the exact sum of sizes, and the count of prints. */
interface PrintTotals {
  volume: string;
  trades: number;
}

/** The totals of a candle opened by `sample`, and of one that takes `sample` in. */
export const printTotals = {
  first: (sample: TradeSample): PrintTotals => ({ volume: sample.size, trades: 1 }),
  added: (candle: PrintTotals, sample: TradeSample): PrintTotals => ({
    volume: sumDecimals([candle.volume, sample.size]),
    trades: candle.trades + 1,
  }),
};

/** A trades candle's values as the lease holder shares them, checked again on arrival. */
export const sharedPrintCandle = {
  open: decimalString,
  high: decimalString,
  low: decimalString,
  close: decimalString,
  volume: decimalString,
  trades: z.number().int().positive(),
};
/** The newest activity ids the lease holder took, newest last. */
export const sharedIds = z.array(z.string()).max(ACTIVITY_PAGE_SIZE);

/** What a trades stream keeps between polls so that each print counts once. */
export class TradePrints {
  readonly #history = new TradeHistory();
  /** The newest activity ids taken, newest last: what a peer taking the lease over must not count again. */
  #recentIds: string[] = [];
  /**
   * After taking a peer's series over: the time of the newest trade it counted. This relay's walks
   * have no listing memory of their own until one reaches the listing's end, so until then they
   * count only trades from that time on (those of that very time once each, by the shared ids).
   */
  #countedSince: number | undefined;
  /** After a backfill cut short: the start of the first interval it read whole; earlier trades are left out. */
  #countedFrom: number | undefined;

  get recentIds(): readonly string[] {
    return this.#recentIds;
  }

  /**
   * The trades not taken yet, oldest first, and what taking them changes, done only once they were
   * applied (a response applied too late must not mark its trades counted). `backfilled`: whether
   * the stream's backfill was read (here, or by the lease holder whose series it carries on).
   */
  async read(
    poll: KeptPoll<PrintsUpstream, CandlesEventMap>,
    { market, interval }: CandlesStream,
    backfilled: boolean,
  ): Promise<{ samples: TradeSample[]; taken: () => void }> {
    const walk = await walkActivity(
      activityPages(poll.upstream, market, poll.onRequest),
      this.#history.seen,
      {
        firstPoll: false,
        listing: this.#history.listing,
      },
    );
    // A backfill stops at its entry bound by design; a later walk that does lost trades.
    if (!walk.complete && backfilled) poll.emit('trades:truncated', { market, pages: walk.pages });
    let samples = walk.fresh.map(tradeSample);
    const since = this.#countedSince;
    if (since !== undefined) samples = samples.filter((sample) => sample.at >= since);
    // A listing walked from its newest end (one of unknown order is walked so too) and cut short
    // has older trades in the oldest interval read: that candle would be wrong, now and with every
    // later print in its interval, so the interval is left out for good.
    let countedFrom = this.#countedFrom;
    if (
      !backfilled &&
      !walk.complete &&
      this.#history.listing.order !== 'oldest-first' &&
      samples.length > 0
    ) {
      const intervalMs = candleIntervalMs[interval];
      const oldest = samples.reduce((least, sample) => Math.min(least, sample.at), samples[0]!.at);
      countedFrom = (Math.floor(oldest / intervalMs) + 1) * intervalMs;
    }
    const from = countedFrom;
    if (from !== undefined) samples = samples.filter((sample) => sample.at >= from);
    const taken = (): void => {
      const fresh = this.#history.absorb(walk.fresh);
      this.#recentIds = [...this.#recentIds, ...fresh.map((entry) => entry.activity_id)].slice(
        -ACTIVITY_PAGE_SIZE,
      );
      if (walk.complete) this.#countedSince = undefined;
      this.#countedFrom = countedFrom;
    };
    return { samples, taken };
  }

  /** The lease holder's ids taken over with its series, whose newest candle closes at `newest` (ms). */
  takeShared(seen: readonly string[], newest: number): void {
    for (const id of seen) this.#history.seen.add(id);
    this.#recentIds = seen.slice(-ACTIVITY_PAGE_SIZE);
    this.#countedSince = Number.isFinite(newest) ? newest : undefined;
  }
}

function tradeSample(entry: TradeEntry): TradeSample {
  return { at: Date.parse(entry.activity_timestamp), price: entry.price, size: entry.size };
}
