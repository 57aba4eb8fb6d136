/**
 * @module channels/candles/relay-keeper
 * What one `candles` stream keeps between polls and reads in each (docs/protocol.md "`candles`
 * data"); relay/targets/kept-target.ts polls it within `--upstream-rps`, only while somebody holds
 * the stream, and shares it:
 * - `probability`: upstream's probability history. The first poll reads the backfill range (again
 *   after a long gap), every later poll the shortest range upstream offers;
 *   each point is filed by its own time (./relay-series.ts), so the open candle follows the
 *   newest points as they are served.
 * - the other source, trade prints: ./relay-trade-prints.ts.
 * A candle turns final with the first poll asked after its interval ended. In cluster mode only
 * the lease holder asks upstream; it shares the whole series (and what its source needs so that
 * a point is never counted twice), which the others publish as theirs and carry on from if the
 * lease moves to them.
 */

import { z } from 'zod';
import type { CanonicalRestPath } from '../../protocol/rest-paths.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { type HistoryInterval, historyResponse } from '../../upstream/schemas.ts';
import type { KeptPoll, KeptRead, StreamKeeper } from '../relay-definition.ts';
import { CANDLES_SNAPSHOT_SIZE, type CandlesData } from './candles.ts';
import { type CandleSample, candlesDataOf, mergeSamples, type SeriesCandle } from './relay-series.ts';
import {
  type CandlesEventMap,
  type PrintsUpstream,
  sharedIds,
  sharedPrintCandle,
  TradePrints,
} from './relay-trade-prints.ts';
import { type CandleInterval, type CandlesStream, candleIntervalMs, candlesStreamOf } from './streams.ts';

/** The upstream calls the channel polls with: the probability history, and the activity listing. */
export interface CandlesUpstream extends PrintsUpstream {
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
function sharedCandlesOf<C extends z.ZodType<{ start: number }>>(candle: C) {
  return z.object({
    series: z
      .array(candle)
      .max(CANDLES_SNAPSHOT_SIZE)
      .refine(
        (series) => series.every((c, i) => i === 0 || series[i - 1]!.start < c.start),
        'not oldest first',
      ),
    seen: sharedIds,
  });
}
const sharedProbabilityCandles = sharedCandlesOf(
  z.object({ ...candleTimes, open: z.number(), high: z.number(), low: z.number(), close: z.number() }),
);
const sharedPrintCandles = sharedCandlesOf(z.object({ ...candleTimes, ...sharedPrintCandle }));

export class CandlesKeeper implements StreamKeeper<CandlesUpstream, CandlesData, CandlesEventMap> {
  readonly market: string;
  readonly #stream: CandlesStream;
  #series: SeriesCandle[] = [];
  /** Whether the backfill was read (here, or by the lease holder whose series this one carries on). */
  #backfilled = false;
  /** When the last read applied here was asked (or the lease holder's received). */
  #appliedAt: number | undefined;
  /** What a stream of trade prints keeps so that each counts once (another source's stays empty). */
  readonly #prints = new TradePrints();

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

  async read(poll: KeptPoll<CandlesUpstream, CandlesEventMap>): Promise<KeptRead> {
    const { askedAt } = poll;
    const read: { samples: CandleSample[]; taken: () => void } =
      this.#stream.source === 'probability'
        ? { samples: await this.#historySamples(poll), taken() {} }
        : await this.#prints.read(poll, this.#stream, this.#backfilled);
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
  }: KeptPoll<CandlesUpstream, CandlesEventMap>): Promise<CandleSample[]> {
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

  shared(): unknown {
    return { series: this.#series, seen: this.#prints.recentIds };
  }

  /** The lease holder's series, ordered by when it received it (its polls never overlap). */
  takeShared(body: unknown, receivedAt: number): boolean {
    const shared = this.#stream.source === 'probability' ? sharedProbabilityCandles : sharedPrintCandles;
    const parsed = shared.safeParse(body);
    if (!parsed.success) return false;
    this.#series = parsed.data.series;
    this.#prints.takeShared(parsed.data.seen, Math.max(...this.#series.map((candle) => candle.closeAt)));
    this.#backfilled = true;
    this.#appliedAt = receivedAt;
    return true;
  }
}
