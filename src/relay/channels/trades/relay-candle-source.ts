/**
 * @module relay/channels/trades/relay-candle-source
 * The `trades` source of candle streams on the server (../relay-candle-source.ts; its candle:
 * channels/trades/candle-source.ts): a stream reads upstream's activity pages, walked as the `trades` channel
 * walks them (./relay-activity.ts): its first poll reads back a few pages (an interval it could
 * read only in part gets no candle), later polls only what is new. Each print counts once: a
 * stream keeps what it took, and in cluster mode the lease holder shares the newest ids it took
 * with its series, so a relay the lease moves to counts none of them again. A print adds its
 * price to the candle as any sample does, its size to the volume and one to
 * the count.
 */

import { z } from 'zod';
import { SINCE_MAX_TRADES } from '../../../../packages/protocol/src/channels/trades/since.ts';
import type { TradeEntry, TradesData } from '../../../../packages/protocol/src/channels/trades/trades.ts';
import { compareDecimals, sumDecimals } from '../../../../packages/protocol/src/protocol/decimal.ts';
import { decimalString } from '../../../upstream/schemas.ts';
import type {
  CandleSample,
  KeptSoFar,
  RelayCandleSource,
  SampleReader,
  SourcedStream,
} from '../relay-candle-source.ts';
import type { KeptPoll } from '../relay-definition.ts';
import { ACTIVITY_PAGE_SIZE, TradeHistory, walkActivity } from './relay-activity.ts';
import { type ActivityUpstream, activityPages } from './relay-activity-pages.ts';
import type { TradesEventMap } from './relay-poll.ts';
import { readMarketSince } from './relay-since-record.ts';

/** A trade print's price and size (decimal strings) at its time (ms). */
export interface TradeSample {
  at: number;
  price: string;
  size: string;
}

/** What a trades candle sums beyond its prices: the exact sum of sizes, and the count of prints. */
type PrintTotals = {
  volume: string;
  trades: number;
};

/** Trade prints as a candle source: prices compared and volume summed as exact decimals. */
export const tradesCandleSource: RelayCandleSource<ActivityUpstream, TradesEventMap, TradeSample, string> = {
  name: 'trades',
  takes: (sample: CandleSample): sample is TradeSample => 'size' in sample,
  holds: (candle) => 'volume' in candle,
  value: (sample) => sample.price,
  compare: compareDecimals,
  first: (sample): PrintTotals => ({ volume: sample.size, trades: 1 }),
  added: (candle, sample): PrintTotals => {
    // `holds` vouched for the candle: a trades candle's totals.
    const totals = candle as PrintTotals;
    return { volume: sumDecimals([totals.volume, sample.size]), trades: totals.trades + 1 };
  },
  sharedValues: {
    open: decimalString,
    high: decimalString,
    low: decimalString,
    close: decimalString,
    volume: decimalString,
    trades: z.number().int().positive(),
  },
  /** The newest activity ids the lease holder took, newest last. */
  sharedSeen: z.array(z.string()).max(ACTIVITY_PAGE_SIZE),
  reader: (stream) => new TradePrints(stream),
  // The prints since then, each `activity_id` once: from the record of the market's trades where it
  // reaches back that far, else as the channel's own history reads them from upstream.
  history: async (upstream, market, since, now, request, record) => {
    if (since.kind === 'time') {
      const recorded = await record?.since('trades', market, since.at);
      if (recorded !== undefined) return recordedPrints(recorded, since.at);
    }
    const read = await readMarketSince(upstream, market, since, now, request);
    return read.ok ? { ok: true, pages: read.pages, samples: read.trades.map(tradeSample) } : read;
  },
};

/** What a trades stream keeps between polls so that each print counts once. */
class TradePrints implements SampleReader<ActivityUpstream, TradesEventMap> {
  readonly #stream: SourcedStream;
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

  constructor(stream: SourcedStream) {
    this.#stream = stream;
  }

  get seen(): readonly string[] {
    return this.#recentIds;
  }

  /**
   * The trades not taken yet, oldest first, and what taking them changes, done only once they were
   * applied (a response applied too late must not mark its trades counted).
   */
  async read(
    poll: KeptPoll<ActivityUpstream, TradesEventMap>,
    { backfilled }: KeptSoFar,
  ): Promise<{ samples: TradeSample[]; taken: () => void }> {
    const { market, intervalMs } = this.#stream;
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

/** The trades of recorded `trades` messages at or after `from`, each `activity_id` once, as prints. */
function recordedPrints(data: readonly unknown[], from: number) {
  const seen = new Set<string>();
  const samples: TradeSample[] = [];
  // The record holds what the trades stream sent: its data has the channel's shape.
  for (const { trades } of data as TradesData[])
    for (const entry of trades) {
      if (seen.has(entry.activity_id) || Date.parse(entry.activity_timestamp) < from) continue;
      seen.add(entry.activity_id);
      samples.push(tradeSample(entry));
    }
  if (samples.length > SINCE_MAX_TRADES)
    return {
      ok: false as const,
      reason: 'too_many' as const,
      message: `"since": more than ${SINCE_MAX_TRADES} trades since then: ask a later since`,
      pages: 0,
    };
  return { ok: true as const, pages: 0, samples };
}

function tradeSample(entry: TradeEntry): TradeSample {
  return { at: Date.parse(entry.activity_timestamp), price: entry.price, size: entry.size };
}
