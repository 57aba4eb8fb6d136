/**
 * @module relay/channels/candles/relay-history
 * The `probability` source of candles on the server (docs/protocol.md "`candles` data"):
 * upstream's probability history. A stream's first poll reads the backfill range (again after a
 * long gap), every later poll the shortest range upstream offers; each point is filed by its own
 * time (./relay-series.ts), so the open candle follows the newest points as they are served.
 */
import { z } from 'zod';
import type { CandleInterval } from '../../../../packages/protocol/src/channels/candles/streams.ts';
import type { CanonicalRestPath } from '../../../../packages/protocol/src/protocol/rest-paths.ts';
import { UpstreamError } from '../../../upstream/contract/errors.ts';
import { type HistoryInterval, historyResponse } from '../../../upstream/contract/schemas.ts';
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
};
