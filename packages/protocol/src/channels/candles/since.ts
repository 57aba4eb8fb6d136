/**
 * @module channels/candles/since
 * A `candles` subscription's `since` (docs/protocol.md "History since a time"): a time, asked of
 * streams whose source serves history (its `since`, ../candle-source.ts), within that source's
 * bounds. Node-free: the relay checks a request with it and the SDK checks its option before sending.
 */
import type { CandleSourceOf } from '../candle-source.ts';
import type { SinceCheck } from '../history.ts';
import type { CandlesStream } from './streams.ts';

/** The check of a `since` on streams of `sources`, whose ids `streamOf` reads. */
export function candlesSince(
  sources: readonly CandleSourceOf[],
  streamOf: (id: string) => CandlesStream | undefined,
): (value: unknown, now: number, streamIds: readonly string[]) => SinceCheck {
  const served = sources.filter((source) => source.since !== undefined).map((source) => source.name);
  return (value, now, streamIds) => {
    let checked: SinceCheck = {
      ok: false,
      message: `"since": expected an ISO 8601 time (a candles stream of source ${served.join(', ')})`,
    };
    for (const id of streamIds) {
      const name = streamOf(id)?.source;
      const check = sources.find((source) => source.name === name)?.since;
      if (check === undefined)
        return {
          ok: false,
          message: `"since" applies to candles of source ${served.join(', ')} only, not ${id}`,
        };
      checked = check(value, now);
      if (!checked.ok) return checked;
    }
    // A range of candles starts at a time; an entry's id names no interval.
    if (checked.ok && checked.since.kind !== 'time')
      return {
        ok: false,
        message: `"since": ${JSON.stringify(value)} is not an ISO 8601 time with its zone (a candles range starts at a time)`,
      };
    return checked;
  };
}
