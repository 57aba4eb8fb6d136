/**
 * @module channels/candles/relay-keeper
 * What one `candles` stream keeps between polls and reads in each (docs/protocol.md "`candles`
 * data"); relay/targets/kept-target.ts polls it within `--upstream-rps`, only while somebody holds
 * the stream, and shares it:
 * - `probability`: upstream's probability history. The first poll reads the backfill range (again
 *   after a long gap), every later poll the shortest range upstream offers;
 *   each point is filed by its own time (./relay-series.ts), so the open candle follows the
 *   newest points as they are served.
 * - `trades`: upstream's activity pages, walked as the `trades` channel walks them
 *   (channels/trades/relay-activity.ts): the first poll reads back a few pages (an interval it could read
 *   only in part gets no candle), later polls only what is new.
 * A candle turns final with the first poll asked after its interval ended. In cluster mode only
 * the lease holder asks upstream; it shares the whole series (and, for trades, the newest ids it
 * took), which the others publish as theirs and carry on from if the lease moves to them.
 */

import { z } from 'zod';
import type { CanonicalRestPath } from '../../protocol/rest-paths.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { decimalString, type HistoryInterval, historyResponse } from '../../upstream/schemas.ts';
import type { KeptPoll, KeptRead, StreamKeeper } from '../relay-definition.ts';
import { ACTIVITY_PAGE_SIZE, TradeHistory, walkActivity } from '../trades/relay-activity.ts';
import { type ActivityUpstream, activityPages } from '../trades/relay-activity-pages.ts';
import type { TradesEventMap } from '../trades/relay-poll.ts';
import type { TradeEntry } from '../trades/trades.ts';
import { CANDLES_SNAPSHOT_SIZE, type CandlesData } from './candles.ts';
import { type CandleSample, candlesDataOf, mergeSamples, type SeriesCandle } from './relay-series.ts';
import { type CandleInterval, type CandlesStream, candleIntervalMs, candlesStreamOf } from './streams.ts';

/** The upstream calls the channel polls with: the probability history, and the activity listing. */
export interface CandlesUpstream extends ActivityUpstream {
  publicBody(request: Pick<CanonicalRestPath, 'template' | 'pathname' | 'query'>): Promise<unknown>;
}

/**
 * The history range a stream's first poll reads: of upstream's ranges, the one nearest the 200
 * candles a stream keeps (`1d` stops at 30 days: how far `all` reaches upstream does not say).
 */
const BACKFILL_RANGE: Readonly<Record<CandleInterval, HistoryInterval>> = {
  '1m': '1h',
  '5m': '24h',
  '1h': '7d',
  '1d': '30d',
};
/**
 * Later polls need only the newest points: upstream's shortest range, while the last read applied
 * lies well inside it. After a longer gap (upstream failing, the lease away) the backfill range is
 * read again, so the candles of the gap get all their points; what was read before changes nothing.
 */
const LIVE_RANGE: HistoryInterval = '1h';
const LIVE_RANGE_MS = 3_600_000;
const HISTORY_TEMPLATE = '/api/markets/:id/history';

/** What the lease holder shares after a poll, validated again on arrival against the stream's source. */
const candleTimes = {
  start: z.number().int(),
  final: z.boolean(),
  openAt: z.number().int(),
  closeAt: z.number().int(),
};
const sharedCandleOf = {
  probability: z.object({
    ...candleTimes,
    open: z.number(),
    high: z.number(),
    low: z.number(),
    close: z.number(),
  }),
  trades: z.object({
    ...candleTimes,
    open: decimalString,
    high: decimalString,
    low: decimalString,
    close: decimalString,
    volume: decimalString,
    trades: z.number().int().positive(),
  }),
};
function sharedCandlesOf<C extends z.ZodType<{ start: number }>>(candle: C) {
  return z.object({
    series: z
      .array(candle)
      .max(CANDLES_SNAPSHOT_SIZE)
      .refine(
        (series) => series.every((c, i) => i === 0 || series[i - 1]!.start < c.start),
        'not oldest first',
      ),
    seen: z.array(z.string()).max(ACTIVITY_PAGE_SIZE),
  });
}
const sharedCandles = {
  probability: sharedCandlesOf(sharedCandleOf.probability),
  trades: sharedCandlesOf(sharedCandleOf.trades),
};

export class CandlesKeeper implements StreamKeeper<CandlesUpstream, CandlesData, TradesEventMap> {
  readonly market: string;
  readonly #stream: CandlesStream;
  #series: SeriesCandle[] = [];
  /** Whether the backfill was read (here, or by the lease holder whose series this one carries on). */
  #backfilled = false;
  /** When the last read applied here was asked (or the lease holder's received). */
  #appliedAt: number | undefined;
  readonly #trades = new TradeHistory();
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

  constructor(streamId: string) {
    // The registry only holds ids canonicalStreamId accepted.
    const stream = candlesStreamOf(streamId);
    if (stream === undefined) throw new TypeError(`not a candles stream: ${streamId}`);
    this.#stream = stream;
    this.market = stream.market;
  }

  get state(): CandlesData {
    return candlesDataOf(this.#series);
  }

  async read(poll: KeptPoll<CandlesUpstream, TradesEventMap>): Promise<KeptRead> {
    const { askedAt } = poll;
    const read =
      this.#stream.source === 'probability'
        ? { samples: await this.#historySamples(poll), taken() {} }
        : await this.#tradeSamples(poll);
    return {
      apply: () => {
        this.#series = mergeSamples(
          this.#series,
          read.samples,
          candleIntervalMs[this.#stream.interval],
          askedAt,
        );
        read.taken();
        this.#backfilled = true;
        this.#appliedAt = askedAt;
      },
    };
  }

  /** The probability history's points, as upstream serves them (numbers). */
  async #historySamples({
    upstream,
    askedAt,
    onRequest,
  }: KeptPoll<CandlesUpstream, TradesEventMap>): Promise<CandleSample[]> {
    const { market, interval } = this.#stream;
    const live = this.#appliedAt !== undefined && askedAt - this.#appliedAt < LIVE_RANGE_MS / 2;
    const range = live ? LIVE_RANGE : BACKFILL_RANGE[interval];
    onRequest();
    const body = await upstream.publicBody({
      template: HISTORY_TEMPLATE,
      pathname: `/api/markets/${market}/history`,
      query: { interval: range },
    });
    const parsed = historyResponse.safeParse(body);
    if (!parsed.success)
      throw new UpstreamError(`GET ${HISTORY_TEMPLATE}`, "the body does not match upstream's history");
    return parsed.data.history.map((point) => ({ at: Date.parse(point.time), value: point.probability }));
  }

  /**
   * The trades not taken yet, oldest first, and what taking them changes, done only once they were
   * applied (a response applied too late must not mark its trades counted).
   */
  async #tradeSamples(
    poll: KeptPoll<CandlesUpstream, TradesEventMap>,
  ): Promise<{ samples: CandleSample[]; taken: () => void }> {
    const { market, interval } = this.#stream;
    const walk = await walkActivity(activityPages(poll.upstream, market, poll.onRequest), this.#trades.seen, {
      firstPoll: false,
      listing: this.#trades.listing,
    });
    // A backfill stops at its entry bound by design; a later walk that does lost trades.
    if (!walk.complete && this.#backfilled) poll.emit('trades:truncated', { market, pages: walk.pages });
    let samples = walk.fresh.map(tradeSample);
    const since = this.#countedSince;
    if (since !== undefined) samples = samples.filter((sample) => sample.at >= since);
    // A listing walked from its newest end (one of unknown order is walked so too) and cut short
    // has older trades in the oldest interval read: that candle would be wrong, now and with every
    // later print in its interval, so the interval is left out for good.
    let countedFrom = this.#countedFrom;
    if (
      !this.#backfilled &&
      !walk.complete &&
      this.#trades.listing.order !== 'oldest-first' &&
      samples.length > 0
    ) {
      const intervalMs = candleIntervalMs[interval];
      const oldest = samples.reduce((least, sample) => Math.min(least, sample.at), samples[0]!.at);
      countedFrom = (Math.floor(oldest / intervalMs) + 1) * intervalMs;
    }
    const from = countedFrom;
    if (from !== undefined) samples = samples.filter((sample) => sample.at >= from);
    const taken = (): void => {
      const fresh = this.#trades.absorb(walk.fresh);
      this.#recentIds = [...this.#recentIds, ...fresh.map((entry) => entry.activity_id)].slice(
        -ACTIVITY_PAGE_SIZE,
      );
      if (walk.complete) this.#countedSince = undefined;
      this.#countedFrom = countedFrom;
    };
    return { samples, taken };
  }

  shared(): unknown {
    return { series: this.#series, seen: this.#recentIds };
  }

  /** The lease holder's series, ordered by when it received it (its polls never overlap). */
  takeShared(body: unknown, receivedAt: number): boolean {
    const parsed = sharedCandles[this.#stream.source].safeParse(body);
    if (!parsed.success) return false;
    this.#series = parsed.data.series;
    for (const id of parsed.data.seen) this.#trades.seen.add(id);
    this.#recentIds = parsed.data.seen.slice(-ACTIVITY_PAGE_SIZE);
    this.#backfilled = true;
    this.#appliedAt = receivedAt;
    const newest = Math.max(...this.#series.map((candle) => candle.closeAt));
    this.#countedSince = Number.isFinite(newest) ? newest : undefined;
    return true;
  }
}

function tradeSample(entry: TradeEntry): CandleSample {
  return { at: Date.parse(entry.activity_timestamp), price: entry.price, size: entry.size };
}
