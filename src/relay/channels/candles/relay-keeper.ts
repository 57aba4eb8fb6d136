/**
 * @module relay/channels/candles/relay-keeper
 * What one `candles` stream keeps between polls and reads in each (docs/protocol.md "`candles`
 * data"); relay/poll/kept-target.ts polls it within `--upstream-rps`, only while somebody holds
 * the stream, and shares it. The stream's source (../relay-candle-source.ts) reads its samples, which
 * ./relay-series.ts files into candles. A candle turns final with the first poll asked after its
 * interval ended. In cluster mode only the lease holder asks upstream; it shares the whole series
 * (and what its source needs so that a sample is never counted twice), which the others publish
 * as theirs and carry on from if the lease moves to them.
 */

import { z } from 'zod';
import type { CandleFields } from '../../../../packages/protocol/src/channels/candle-source.ts';
import {
  CANDLES_SNAPSHOT_SIZE,
  type CandlesData,
} from '../../../../packages/protocol/src/channels/candles/candles.ts';
import {
  type CandlesStream,
  candleIntervalMs,
  candlesStreamReader,
} from '../../../../packages/protocol/src/channels/candles/streams.ts';
import type { RelayCandleSource, SampleReader } from '../relay-candle-source.ts';
import type { EventArgs, KeptPoll, KeptRead, StreamKeeper } from '../relay-definition.ts';
import { candlesDataOf, mergeSamples, type SeriesCandle } from './relay-series.ts';

/** What the lease holder shares after a poll, validated again on arrival against the stream's source. */
const candleTimes = {
  start: z.number().int(),
  final: z.boolean(),
  openAt: z.number().int(),
  closeAt: z.number().int(),
};
function sharedCandlesOf<U, E extends EventArgs<E>>(source: RelayCandleSource<U, E>) {
  return z.object({
    series: z
      .array(z.object({ ...candleTimes, ...source.sharedValues }))
      .max(CANDLES_SNAPSHOT_SIZE)
      .refine(
        (series) => series.every((c, i) => i === 0 || series[i - 1]!.start < c.start),
        'not oldest first',
      ),
    seen: source.sharedSeen,
  });
}

/** The keepers of streams from `sources`, whose candles are `C`. */
export function candlesKeeper<U, E extends EventArgs<E>, C extends CandleFields>(
  sources: readonly RelayCandleSource<U, E>[],
): (streamId: string) => StreamKeeper<U, CandlesData<C>, E> {
  const streamOf = candlesStreamReader(sources.map((source) => source.name));
  return (streamId) => {
    // The registry only holds ids canonicalStreamId accepted.
    const stream = streamOf(streamId);
    const source = sources.find((each) => each.name === stream?.source);
    if (stream === undefined || source === undefined)
      throw new TypeError(`not a candles stream: ${streamId}`);
    return new CandlesKeeper<U, E, C>(stream, source);
  };
}

class CandlesKeeper<U, E extends EventArgs<E>, C extends CandleFields>
  implements StreamKeeper<U, CandlesData<C>, E>
{
  readonly market: string;
  readonly #stream: CandlesStream;
  /** The stream's source: a sample of another is refused, not merged. */
  readonly #source: RelayCandleSource<U, E>;
  readonly #reader: SampleReader<U, E>;
  readonly #sharedCandles: ReturnType<typeof sharedCandlesOf>;
  #series: SeriesCandle[] = [];
  /** Whether the backfill was read (here, or by the lease holder whose series this one carries on). */
  #backfilled = false;
  /** When the last read applied here was asked (or the lease holder's received). */
  #appliedAt: number | undefined;

  constructor(stream: CandlesStream, source: RelayCandleSource<U, E>) {
    this.#stream = stream;
    this.#source = source;
    this.#reader = source.reader({ ...stream, intervalMs: candleIntervalMs[stream.interval] });
    this.#sharedCandles = sharedCandlesOf(source);
    this.market = stream.market;
  }

  get state(): CandlesData<C> {
    return candlesDataOf<C>(this.#series);
  }

  async read(poll: KeptPoll<U, E>): Promise<KeptRead> {
    const { askedAt } = poll;
    const read = await this.#reader.read(poll, { backfilled: this.#backfilled, appliedAt: this.#appliedAt });
    return {
      apply: () => {
        this.#series = mergeSamples(
          this.#series,
          read.samples,
          candleIntervalMs[this.#stream.interval],
          askedAt,
          [this.#source],
        );
        read.taken();
        this.#backfilled = true;
        this.#appliedAt = askedAt;
      },
    };
  }

  shared(): unknown {
    return { series: this.#series, seen: this.#reader.seen };
  }

  /** The lease holder's series, ordered by when it received it (its polls never overlap). */
  takeShared(body: unknown, receivedAt: number): boolean {
    const parsed = this.#sharedCandles.safeParse(body);
    if (!parsed.success) return false;
    // The source's schema checked each candle's values.
    this.#series = parsed.data.series as SeriesCandle[];
    this.#reader.takeShared(parsed.data.seen, Math.max(...this.#series.map((candle) => candle.closeAt)));
    this.#backfilled = true;
    this.#appliedAt = receivedAt;
    return true;
  }
}
