/**
 * @module relay/channels/candles/relay-history
 * The `probability` source of candles on the server (docs/protocol.md "`candles` data"):
 * upstream's probability history. A stream's first poll reads the backfill range (again after a
 * long gap), every later poll the shortest range upstream offers; each point is filed by its own
 * time (./relay-series.ts), so the open candle follows the newest points as they are served. Its
 * history since a time is read from the relay's record of the `probabilities` map, never upstream.
 */
import { z } from 'zod';
import type { CandleInterval } from '../../../../packages/protocol/src/channels/candles/streams.ts';
import {
  PROBABILITIES_STREAM,
  type ProbabilitiesUpdateData,
} from '../../../../packages/protocol/src/channels/probabilities/probabilities.ts';
import type { CanonicalRestPath } from '../../../../packages/protocol/src/protocol/rest-paths.ts';
import { UpstreamError } from '../../../upstream/errors.ts';
import { type HistoryInterval, historyResponse } from '../../../upstream/schemas.ts';
import { probabilitiesChannel } from '../probabilities/relay.ts';
import type { CandleSample, RelayCandleSource, SourcedStream } from '../relay-candle-source.ts';

/** The upstream call the source reads with: the probability history. */
export interface HistoryUpstream {
  publicBody(request: Pick<CanonicalRestPath, 'template' | 'pathname' | 'query'>): Promise<unknown>;
}

/** A probability history point (a number, as upstream serves it) at its time (ms). */
export interface ProbabilitySample {
  at: number;
  value: number;
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

export const historyCandles: RelayCandleSource<
  HistoryUpstream,
  Record<never, never>,
  ProbabilitySample,
  number
> = {
  name: 'probability',
  takes: (sample: CandleSample): sample is ProbabilitySample => 'value' in sample,
  holds: (candle) => typeof candle.open === 'number',
  value: (sample) => sample.value,
  compare: (a, b) => a - b,
  first: () => ({}),
  added: () => ({}),
  sharedValues: { open: z.number(), high: z.number(), low: z.number(), close: z.number() },
  // A history point counts once by its time alone.
  sharedSeen: z.array(z.string()).max(0),
  reader: ({ market, interval }: SourcedStream & { interval: CandleInterval }) => ({
    seen: [],
    takeShared() {},
    /** The probability history's points, as upstream serves them (numbers). */
    async read({ upstream, askedAt, onRequest }, { appliedAt }) {
      const live = appliedAt !== undefined && askedAt - appliedAt < LIVE_RANGE_MS / 2;
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
      const samples = parsed.data.history.map((point) => ({
        at: Date.parse(point.time),
        value: point.probability,
      }));
      return { samples, taken() {} };
    },
  }),
  recordOf: () => ({ channel: probabilitiesChannel, streamId: PROBABILITIES_STREAM }),
  // The points since then from the record of the `probabilities` map, which the stream's `since`
  // reads only where that record reaches back to the range's start.
  history: async (_upstream, market, since, _now, _request, record) => {
    // A candles range starts at a time (the channel's check).
    if (since.kind !== 'time') throw new TypeError('a candles range starts at a time');
    const recorded = await record?.since(probabilitiesChannel, PROBABILITIES_STREAM, since.at);
    if (recorded === undefined) throw new Error('the record of probabilities does not reach back that far');
    return { ok: true, pages: 0, samples: recordedPoints(recorded, market, since.at) };
  },
};

/**
 * The market's points in recorded `probabilities` messages: each entry's `midpoint` (what
 * upstream's history calls `probability`, a number as upstream serves it) at the entry's own
 * `timestamp`, from `from` (ms) on. An entry repeated unchanged is the same point again, which
 * changes no candle (./relay-series.ts).
 */
function recordedPoints(data: readonly unknown[], market: string, from: number): ProbabilitySample[] {
  const samples: ProbabilitySample[] = [];
  // The record holds what the probabilities stream sent: a snapshot's or an update's map.
  for (const map of data as ProbabilitiesUpdateData[]) {
    const entry = map[market];
    if (entry === null || entry === undefined) continue;
    const at = Date.parse(entry.timestamp);
    if (at >= from) samples.push({ at, value: entry.midpoint });
  }
  return samples;
}
