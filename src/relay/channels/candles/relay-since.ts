/**
 * @module relay/channels/candles/relay-since
 * A `candles` stream's history since a time (docs/protocol.md "History since a time"), for a stream
 * whose source reads one (its `history`, ../relay-candle-source.ts). The read takes the source's
 * samples since the start of the interval `since` falls in (so that its first candle is whole) and
 * files them into candles as the stream files its own (./relay-series.ts); a candle is final, and
 * kept, when its interval ended before the read began, so every sample of it was there to read.
 * The snapshot is the stream's state as the subscriber's messages left it, whose checksum every
 * later update keeps verifiable, and beside it, in `history`, the read's final candles older than
 * every candle of that state: the state is the stream's word on the candles it holds.
 */
import type { CandleFields } from '../../../../packages/protocol/src/channels/candle-source.ts';
import {
  applyCandlesUpdate,
  type CandlesData,
} from '../../../../packages/protocol/src/channels/candles/candles.ts';
import {
  candleIntervalMs,
  candlesStreamReader,
} from '../../../../packages/protocol/src/channels/candles/streams.ts';
import type { RelayCandleSource } from '../relay-candle-source.ts';
import type { EventArgs, ServesHistory } from '../relay-definition.ts';
import { candlesDataOf, mergeSamples } from './relay-series.ts';

/** The history of streams from `sources`, whose candles are `C`. */
export function candlesHistory<U, E extends EventArgs<E>, C extends CandleFields>(
  sources: readonly RelayCandleSource<U, E>[],
): ServesHistory<U, CandlesData<C>, CandlesData<C>> {
  const streamOf = candlesStreamReader(sources.map((source) => source.name));
  return {
    async read(upstream, streamId, since, now, request, record) {
      const stream = streamOf(streamId);
      const source = sources.find((each) => each.name === stream?.source);
      // The request's check lets only a time, on a stream whose source reads history, through.
      if (stream === undefined || source?.history === undefined || since.kind !== 'time')
        throw new TypeError(`no history of ${streamId}`);
      const intervalMs = candleIntervalMs[stream.interval];
      const from = Math.floor(since.at / intervalMs) * intervalMs;
      const text = new Date(from).toISOString();
      const read = await source.history(
        upstream,
        stream.market,
        { kind: 'time', at: from, text },
        now,
        request,
        record,
      );
      if (!read.ok) return read;
      const series = mergeSamples([], read.samples, intervalMs, now, [source], Number.POSITIVE_INFINITY);
      const final = series.filter((candle) => candle.final);
      return { ok: true, pages: read.pages, ...candlesDataOf<C>(final) };
    },
    recordOnly(streamId, since) {
      const stream = streamOf(streamId);
      const source = sources.find((each) => each.name === stream?.source);
      if (stream === undefined || source?.recordOf === undefined || since.kind !== 'time') return undefined;
      const intervalMs = candleIntervalMs[stream.interval];
      return { ...source.recordOf(stream.market), from: Math.floor(since.at / intervalMs) * intervalMs };
    },
    snapshotOf(read, _since, join, held) {
      const state = held.reduce(
        (data, message) =>
          message.type === 'snapshot' ? message.data : applyCandlesUpdate(data, message.data),
        join,
      );
      const oldest = state.candles[0];
      const history = read.candles.filter(
        (candle) => oldest === undefined || Date.parse(candle.start) < Date.parse(oldest.start),
      );
      return { candles: state.candles, history };
    },
  };
}
