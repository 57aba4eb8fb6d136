/**
 * @module relay/targets/candles-target
 * One `candles` stream as a poll target (docs/protocol.md "`candles` data"), scheduled with every
 * other target within `--upstream-rps`, and only while somebody holds the stream:
 * - `probability`: upstream's probability history. The first poll reads the backfill range (again
 *   after a long gap), every later poll the shortest range upstream offers;
 *   each point is filed by its own time (relay/channels/candles.ts), so the open candle follows the
 *   newest points as they are served.
 * - `trades`: upstream's activity pages, walked as the `trades` channel walks them
 *   (channels/trades/relay-activity.ts): the first poll reads back a few pages (an interval it could read
 *   only in part gets no candle), later polls only what is new.
 * A candle turns final with the first poll asked after its interval ended. In cluster mode only
 * the lease holder asks upstream; it shares the whole series (and, for trades, the newest ids it
 * took), which the others publish as theirs and carry on from if the lease moves to them.
 */

import { z } from 'zod';
import { ACTIVITY_PAGE_SIZE, TradeHistory, walkActivity } from '../../channels/trades/relay-activity.ts';
import { activityPages } from '../../channels/trades/relay-activity-pages.ts';
import {
  type CandleInterval,
  type CandlesStream,
  candleIntervalMs,
  candlesStreamOf,
} from '../../protocol/candle-streams.ts';
import { CANDLES_SNAPSHOT_SIZE } from '../../protocol/candles.ts';
import type { TradeEntry } from '../../protocol/messages.ts';
import type { HistoryInterval } from '../../upstream/endpoints.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { decimalString, historyResponse } from '../../upstream/schemas.ts';
import { streamTargetKey } from '../../util/keys.ts';
import { type CandleSample, candlesDataOf, mergeSamples, type SeriesCandle } from '../channels/candles.ts';
import type { SharedResult } from '../coordination/shared-result.ts';
import type { TargetTiming } from '../poll/scheduler.ts';
import type { PollOutcome } from './outcomes.ts';
import { type PollContext, PollTarget } from './poll-target.ts';

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

export class CandlesTarget extends PollTarget {
  readonly kind = 'candles';
  readonly channel = 'candles';
  readonly streamId: string;
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

  constructor(streamId: string, timing: TargetTiming, context: PollContext) {
    super(streamTargetKey('candles', streamId), timing, context);
    this.streamId = streamId;
    // The registry only holds ids canonicalStreamId accepted.
    const stream = candlesStreamOf(streamId);
    if (stream === undefined) throw new TypeError(`not a candles stream: ${streamId}`);
    this.#stream = stream;
    context.cluster.follow(this.key, (result) => this.#onShared(result));
  }

  protected async pollOnce(): Promise<readonly PollOutcome[]> {
    const { cluster, now, registry } = this.context;
    const askedAt = this.beginAsk();
    // A refusal of a walk's later page is about that page, not about the market.
    let requests = 0;
    const counted = (): void => {
      requests += 1;
      this.requestSent();
    };
    try {
      if (!(await this.holdsLease())) return [];
      if (registry.streamsOf('candles', this.streamId).size === 0) return [];
      const read =
        this.#stream.source === 'probability'
          ? { samples: await this.#historySamples(askedAt, counted), taken() {} }
          : await this.#tradeSamples(counted);
      if (this.removed) return [];
      const receivedAt = now();
      if (!this.#apply(read.samples, askedAt, receivedAt)) return [];
      read.taken();
      this.#backfilled = true;
      this.#appliedAt = askedAt;
      cluster.share(this.key, () => ({
        kind: 'response',
        receivedAt,
        body: { series: this.#series, seen: this.#recentIds },
      }));
      this.emitPoll('candles', 1, 'ok', askedAt);
      return [];
    } catch (error) {
      if (this.removed) return [];
      const { market } = this.#stream;
      if (requests === 1 && this.context.existence.isGone(error, { kind: 'market', value: market })) {
        this.emitPoll('candles', 1, 'not_found', askedAt, error);
        cluster.share(this.key, () => ({ kind: 'not_found' }));
        return [this.#notFound()];
      }
      return this.failed('candles', 1, askedAt, error);
    }
  }

  #notFound(): PollOutcome {
    return { type: 'not_found', kind: 'candles', id: this.streamId };
  }

  /** The probability history's points, as upstream serves them (numbers). */
  async #historySamples(askedAt: number, counted: () => void): Promise<CandleSample[]> {
    const { market, interval } = this.#stream;
    const live = this.#appliedAt !== undefined && askedAt - this.#appliedAt < LIVE_RANGE_MS / 2;
    const range = live ? LIVE_RANGE : BACKFILL_RANGE[interval];
    counted();
    const body = await this.source.publicBody({
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
  async #tradeSamples(counted: () => void): Promise<{ samples: CandleSample[]; taken: () => void }> {
    const { market, interval } = this.#stream;
    const walk = await walkActivity(activityPages(this.source, market, counted), this.#trades.seen, {
      firstPoll: false,
      listing: this.#trades.listing,
    });
    // A backfill stops at its entry bound by design; a later walk that does lost trades.
    if (!walk.complete && this.#backfilled)
      this.context.events.emit('trades:truncated', { market, pages: walk.pages });
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

  /** Merges `samples` and publishes the candles; false when the response came too late or nobody holds the stream. */
  #apply(samples: readonly CandleSample[], askedAt: number, receivedAt: number): boolean {
    if (!this.accepts(askedAt)) return false;
    if (this.context.registry.streamsOf('candles', this.streamId).size === 0) return false;
    this.#series = mergeSamples(this.#series, samples, candleIntervalMs[this.#stream.interval], askedAt);
    this.#publish(receivedAt, askedAt);
    return true;
  }

  #publish(receivedAt: number, askedAt: number): void {
    const { registry, publisher } = this.context;
    const state = candlesDataOf(this.#series);
    // Upstream's history and activity have no snapshot time: `ts` is when the relay received them.
    const ts = new Date(receivedAt).toISOString();
    let changed = false;
    let first = false;
    for (const stream of registry.streamsOf('candles', this.streamId)) {
      first ||= !stream.hasState;
      if (publisher.publish(stream, state, ts, ts, receivedAt)) changed = true;
    }
    this.confirmed(askedAt, first ? undefined : changed);
  }

  /** The lease holder's series, ordered by when it received it (its polls never overlap). */
  #onShared(result: SharedResult): void {
    if (result.kind === 'not_found') this.context.report(this.#notFound());
    if (result.kind !== 'response' || !this.accepts(result.receivedAt)) return;
    const parsed = sharedCandles[this.#stream.source].safeParse(result.body);
    if (!parsed.success || this.context.registry.streamsOf('candles', this.streamId).size === 0) return;
    this.#series = parsed.data.series;
    for (const id of parsed.data.seen) this.#trades.seen.add(id);
    this.#recentIds = parsed.data.seen.slice(-ACTIVITY_PAGE_SIZE);
    this.#backfilled = true;
    this.#appliedAt = result.receivedAt;
    const newest = Math.max(...this.#series.map((candle) => candle.closeAt));
    this.#countedSince = Number.isFinite(newest) ? newest : undefined;
    this.#publish(result.receivedAt, result.receivedAt);
  }
}

function tradeSample(entry: TradeEntry): CandleSample {
  return { at: Date.parse(entry.activity_timestamp), price: entry.price, size: entry.size };
}
